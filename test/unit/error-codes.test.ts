import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Each error class of src/ with its body, as written. */
function errorClasses(): Array<{ file: string; name: string; body: string }> {
  const out: Array<{ file: string; name: string; body: string }> = [];
  for (const file of sources(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/class (\w+) extends (\w*Error) \{/g)) {
      // The body up to the class's closing brace at the start of a line (or a one-line body).
      const from = m.index + m[0].length;
      const end = text.startsWith('}', from) ? from : text.indexOf('\n}', from);
      out.push({ file: file.slice(SRC.length + 1), name: m[1]!, body: text.slice(from, end) });
    }
  }
  return out;
}

// A log line, a CLI's exit or a caller's catch tells an internal error by its code, as fastify's createError
// errors are told: never by parsing its message. Planted fault it catches: an error class added without one.
test('every error class in src/ carries a code, and no two internal ones share it', () => {
  const classes = errorClasses();
  assert.ok(classes.length >= 20, `the walk found the error classes (${classes.length})`);
  const without = classes.filter((c) => !/readonly code\b/.test(c.body)).map((c) => `${c.file}: ${c.name}`);
  assert.deepEqual(without, [], 'error classes without a code');
  const fixed = new Map<string, string>();
  for (const c of classes) {
    const code = /readonly code = '([a-z_]+)'/.exec(c.body)?.[1];
    if (!code) continue; // a code given per instance (ApiError's registry code, a shard move's reason)
    assert.equal(fixed.get(code), undefined, `${c.name} and ${fixed.get(code)} share the code ${code}`);
    fixed.set(code, c.name);
  }
});
