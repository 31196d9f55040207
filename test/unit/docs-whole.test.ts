/**
 * The docs are read by people: a scripted edit that went wrong (a paragraph
 * pasted at every match of an empty pattern once made docs/ingest.md
 * 134,000 lines) must not land unnoticed. No page repeats a run of five
 * non-blank lines, and none is longer than a person reads.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';

const root = new URL('../../', import.meta.url);
const pages = [
  'README.md',
  'CHANGELOG.md',
  ...readdirSync(new URL('docs/', root))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  ...readdirSync(new URL('docs/adr/', root))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/adr/${f}`),
];
/** CHANGELOG grows with every release; every other page is read whole. */
const MAX_LINES = { 'CHANGELOG.md': 5000 } as Record<string, number>;
const RUN = 5;

test('no page of the docs repeats a run of five lines, or is longer than a person reads', () => {
  assert.ok(pages.length > 20, `the pages were found (${pages.length})`);
  const wrong: string[] = [];
  for (const page of pages) {
    const lines = readFileSync(new URL(page, root), 'utf8').split('\n');
    if (lines.length > (MAX_LINES[page] ?? 1500)) wrong.push(`${page}: ${lines.length} lines`);
    const seen = new Map<string, number>();
    for (let i = 0; i + RUN <= lines.length; i++) {
      const run = lines.slice(i, i + RUN);
      // Tables and lists repeat their short scaffolding; a run of prose lines does not.
      if (run.some((l) => l.trim().length < 30 || /^\s*[|`<]/.test(l))) continue;
      const text = run.join('\n');
      const at = seen.get(text);
      if (at !== undefined) {
        wrong.push(`${page}: lines ${i + 1}–${i + RUN} repeat lines ${at + 1}–${at + RUN}`);
        break;
      }
      seen.set(text, i);
    }
  }
  assert.deepEqual(wrong, []);
});
