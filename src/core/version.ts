import { readFileSync } from 'node:fs';

/** This build's version, as package.json gives it (the same file from src/ and from dist/). */
export const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/**
 * The commit this build was made from: written beside dist/ by the build
 * (scripts/copy-assets.mjs) where git could say, else "unknown" (a build
 * from a source archive). Read from src/ it is the checkout's HEAD at the
 * last build, or unknown.
 */
export const COMMIT = (() => {
  try {
    return (JSON.parse(readFileSync(new URL('../build-info.json', import.meta.url), 'utf8')) as { commit?: string }).commit ?? 'unknown';
  } catch {
    return 'unknown';
  }
})();
