import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Every file under `dir` (at any depth) whose name ends with `suffix`, as a path joined to `dir`. */
export const filesUnder = (dir: string, suffix: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith(suffix))
    .map((name) => join(dir, name));

/** The pages a reader reads, relative to `root`: the README, then every page in docs/. */
export const markdownPages = (root: string): string[] => [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
