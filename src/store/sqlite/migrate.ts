import { readdirSync, readFileSync } from 'node:fs';
import type Database from 'better-sqlite3';

const DIR = new URL('./migrations/', import.meta.url);

/**
 * Numbered, append-only migrations (migrations/NNN_name.sql), as on Postgres.
 * SQLite keeps the number of the last one applied in `PRAGMA user_version`.
 * Each runs in one BEGIN IMMEDIATE transaction with the version bump, so
 * several processes opening one file apply each migration once.
 */
export function migrate(db: Database.Database): string[] {
  const files = readdirSync(DIR)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
  const applied: string[] = [];
  for (const f of files) {
    const version = Number(f.slice(0, 3));
    const step = db.transaction(() => {
      // Read inside the write lock: another process may have applied it meanwhile.
      if ((db.pragma('user_version', { simple: true }) as number) >= version) return false;
      db.exec(readFileSync(new URL(f, DIR), 'utf8'));
      db.pragma(`user_version = ${version}`);
      return true;
    });
    if (step.immediate()) applied.push(f);
  }
  return applied;
}

/** The migrations this build knows: a file at a higher version was written by a newer onceonly. */
/** What a file at a schema newer than this build's is, for the caller to say what to do about it; null when it is not. */
export function newerSchema(path: string, version: number): string | null {
  return version > latestVersion() ? `${path} is at schema version ${version}, newer than this onceonly knows (${latestVersion()})` : null;
}

export function latestVersion(): number {
  return Math.max(
    0,
    ...readdirSync(DIR)
      .filter((f) => /^\d{3}_/.test(f))
      .map((f) => Number(f.slice(0, 3))),
  );
}
