import { readdirSync } from 'node:fs';

/**
 * The schema each SQL store migrates to: the number of its last migration
 * file (migrations are numbered and append-only). What `onceonly --version`
 * and `onceonly_build_info` say, so an operator knows which release and
 * which schema a replica runs before an upgrade.
 */
export function schemaVersions(): { sqlite: number; postgres: number } {
  const last = (dir: string) =>
    Math.max(
      0,
      ...readdirSync(new URL(`./${dir}/migrations/`, import.meta.url))
        .map((f) => /^(\d{3})_[a-z0-9_]+\.sql$/.exec(f)?.[1])
        .filter((n): n is string => n !== undefined)
        .map(Number),
    );
  return { sqlite: last('sqlite'), postgres: last('postgres') };
}
