import { readFileSync } from 'node:fs';

/** This build's version, as package.json gives it (the same file from src/ and from dist/). */
export const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
