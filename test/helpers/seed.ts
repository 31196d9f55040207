/**
 * The seed of a test that draws at random. `npm test` sets TEST_SEED once for
 * the whole run and prints it; each file mixes its own name in, so files
 * draw differently from one another, and the same TEST_SEED replays every
 * file's draw (`TEST_SEED=123 npm test -- chaos/model`). A test puts the seed
 * in its name or failure message. Run directly without TEST_SEED, the older
 * per-file variable (`legacyEnv`) is read, else a seed is drawn from the clock.
 */
export function testSeed(file: string, legacyEnv?: string): number {
  const run = process.env.TEST_SEED;
  if (run !== undefined && run !== '') {
    if (!/^\d{1,10}$/.test(run)) throw new Error(`TEST_SEED must be a whole number, not ${JSON.stringify(run)}`);
    let h = Number(run) >>> 0;
    for (let i = 0; i < file.length; i++) h = Math.imul(h ^ file.charCodeAt(i), 0x01000193) >>> 0;
    return h % 2 ** 31;
  }
  const legacy = legacyEnv ? process.env[legacyEnv] : undefined;
  return legacy !== undefined && legacy !== '' ? Number(legacy) : Date.now() % 2 ** 31;
}

/** A small seeded generator (mulberry32), uniform in [0, 1): a failure replays exactly from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
