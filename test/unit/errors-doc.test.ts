import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ERROR_CODES } from '../../src/http/errors.js';

test('docs/http-errors.md lists exactly the codes and statuses of the error registry', () => {
  const doc = readFileSync(new URL('../../docs/http-errors.md', import.meta.url), 'utf8');
  const rows = [...doc.matchAll(/^\| ([a-z_]+) \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])]);
  assert.deepEqual(Object.fromEntries(rows), ERROR_CODES);
});
