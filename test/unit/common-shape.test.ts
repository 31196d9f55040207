import { test } from 'node:test';
import assert from 'node:assert/strict';
import { commonIncident } from '../../src/inputs/incident/common-shape.js';
import { parseIncident } from '../../src/inputs/incident/parse.js';
import { incidentSchema } from '../../src/inputs/incident/schema.js';
import { ValidationError } from '../../src/core/validation.js';
import { parseWith } from '../../src/core/validation.js';
import { seededRandom, testSeed } from '../helpers/seed.js';

const SEED = testSeed('unit/common-shape');

/** Each field's values: valid ones, then ones just past a bound or of the wrong type. */
const TEXT: [unknown[], unknown[]] = [
  ['olt-7', 'é', '😀', 'a'.repeat(512), '|\\'],
  ['a'.repeat(513), '', 'tab\there', 'line\nbreak', 'nul\u0000', '\ud800', 'del\u007f', 7],
];
const VALUES: Record<string, [unknown[], unknown[]]> = {
  element_id: TEXT,
  fault_class: TEXT,
  root_cause_id: TEXT,
  severity: [
    ['CRITICAL', 'MAJOR', 'MINOR', 'INFO'],
    ['major', 'WARN', '', 3, null],
  ],
  cleared: [
    [true, false],
    ['true', 0, null],
  ],
  summary: [
    ['', 'OLT 7 lost signal', 'a'.repeat(1024), 'tab\tand\nlines\r'],
    ['a'.repeat(1025), 'bell\u0007', '\udc00', 42, null],
  ],
  details: [[{ a: 1 }, {}], ['x']],
  labels: [[{ alertname: 'LOS' }, {}], [{ 'bad-name': 'x' }]],
  extra: [[], ['x']],
};

function draw(random: () => number): Record<string, unknown> {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  const body: Record<string, unknown> = {};
  for (const [field, [valid, invalid]] of Object.entries(VALUES)) {
    const required = ['element_id', 'fault_class', 'root_cause_id', 'severity'].includes(field);
    // Mostly present when required, mostly absent when not, mostly valid: so most draws are near the common shape.
    if (random() >= (required ? 0.97 : field === 'cleared' || field === 'summary' ? 0.5 : 0.05)) continue;
    body[field] = valid.length > 0 && random() < 0.92 ? pick(valid) : pick(invalid);
  }
  return body;
}

const outcome = (f: () => unknown) => {
  try {
    return { ok: JSON.stringify(f()) };
  } catch (err) {
    assert.ok(err instanceof ValidationError, `only a validation error is expected, not ${String(err)}`);
    return { error: JSON.stringify({ message: err.message, issues: err.issues }) };
  }
};

test(`the hand check of the common shape takes only what the schema takes, builds it alike, and leaves every error to the schema (seed ${SEED})`, () => {
  const random = seededRandom(SEED);
  let taken = 0;
  let refused = 0;
  for (let i = 0; i < 20_000; i++) {
    const body = draw(random);
    const fast = commonIncident(body);
    const schema = incidentSchema.safeParse(body);
    if (fast !== null) {
      taken++;
      assert.ok(schema.success, `taken by hand, refused by the schema: ${JSON.stringify(body)}`);
      // Key order too: the record and the answer are written from it.
      assert.equal(JSON.stringify(fast), JSON.stringify(schema.data), JSON.stringify(body));
    } else if (!schema.success) refused++;
    else {
      // The schema took what the hand check did not: only a shape outside the common one may.
      assert.ok('details' in body || 'labels' in body, `valid and of the common shape, yet not taken by hand: ${JSON.stringify(body)}`);
    }
    // What parseIncident answers, error or incident, is what the schema alone answers.
    assert.deepEqual(
      outcome(() => parseIncident(body)),
      outcome(() => parseWith(incidentSchema, body, 'incident')),
    );
  }
  // Both sides were exercised, not one of them vacuously.
  assert.ok(taken > 2_000, `${taken} taken by hand`);
  assert.ok(refused > 2_000, `${refused} refused`);
});

test('bodies that are not plain JSON objects are left to the schema', () => {
  const valid = { element_id: 'e', fault_class: 'f', root_cause_id: 'r', severity: 'MAJOR' };
  assert.deepEqual(commonIncident(valid), { ...valid, cleared: false });
  const others: Array<[string, unknown]> = [
    ['null', null],
    ['a string', 'x'],
    ['an array', [valid]],
    ['an object without a prototype', Object.assign(Object.create(null), valid)],
    ['an object whose fields are inherited', Object.create(valid)],
    ['a field present as undefined', { ...valid, summary: undefined }],
  ];
  for (const [what, body] of others) assert.equal(commonIncident(body), null, what);
});
