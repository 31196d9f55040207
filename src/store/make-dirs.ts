import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * `mkdir -p` for the folder a store file goes in. Node's own recursive mkdir
 * spins forever on some paths no one can create (under /proc), so a mistyped
 * store URL would hang the server at full CPU with nothing said; this makes
 * each missing folder in turn and fails on the first it cannot, with the
 * system's reason.
 */
export function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let d = resolve(dir); !existsSync(d); d = dirname(d)) {
    missing.push(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d);
    } catch (err) {
      // Another process made it meanwhile: what was wanted.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}
