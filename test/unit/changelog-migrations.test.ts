/**
 * The CHANGELOG names the schema each release migrates to, and that is the
 * migrations folder: the newest section (Unreleased while there is one)
 * names the last migration of each SQL store, and no section names one
 * that does not exist or goes back from the release after it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { schemaVersions } from '../../src/store/schema-versions.js';

const changelog = readFileSync(new URL('../../CHANGELOG.md', import.meta.url), 'utf8');
/** Each `## …` section's title and the schemas its "migrate forward" line names. */
const sections = changelog
  .split(/^## /m)
  .slice(1)
  .map((text) => {
    const title = text.split('\n')[0]!;
    const m = /Schemas migrate forward at start: SQLite to migration (\d+),\s+Postgres to (?:migration )?(\d+)/.exec(text.replace(/\s+/g, ' '));
    return { title, sqlite: m ? Number(m[1]) : null, postgres: m ? Number(m[2]) : null };
  });

test("the newest CHANGELOG section names the migrations folder's last SQLite and Postgres migration", () => {
  const newest = sections[0]!;
  assert.notEqual(
    newest.sqlite,
    null,
    `"${newest.title}" says which schema it migrates to ("Schemas migrate forward at start: SQLite to migration N, Postgres to migration M")`,
  );
  assert.deepEqual({ sqlite: newest.sqlite, postgres: newest.postgres }, schemaVersions());
});

test('each release names a schema no newer than the one after it', () => {
  const named = sections.filter((s) => s.sqlite !== null);
  assert.ok(named.length >= 2, 'the releases say which schema they migrate to');
  for (let i = 1; i < named.length; i++) {
    assert.ok(named[i]!.sqlite! <= named[i - 1]!.sqlite!, `${named[i]!.title} before ${named[i - 1]!.title}`);
    assert.ok(named[i]!.postgres! <= named[i - 1]!.postgres!, `${named[i]!.title} before ${named[i - 1]!.title}`);
  }
});
