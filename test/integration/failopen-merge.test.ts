// needs: redis postgres
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { systemClock } from '../../src/core/clock.js';
import type { ReconcileOutcome } from '../../src/store/contract/index.js';
import { Journal } from '../../src/store/failopen/journal.js';
import { openStore } from '../../src/store/open.js';
import { backendStores } from '../helpers/backends.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

const claim = (key: string) => ({ tenant: 'acme', key, fingerprint: 'MAJOR|0', ttlMs: 600_000 });

// A replica that failed open answered CREATE/provisional from its journal.
// When the store is back it replays each entry: a key no replica created
// meanwhile is `claimed` (the journal's CREATE stands), and a key another
// replica created while this one was cut off is `merged` into that record
// (its CREATE was the duplicate, and the adapters' upsert by key absorbs it).
// Planted fault it catches: the replay answering `claimed` for a key another replica had created.
for (const backend of ['redis', 'redis-cluster', 'postgres'] as const)
  describe(`fail-open replay on ${backend}`, () => {
    const stores = backendStores(backend);
    before(() => stores.start());
    after(() => stores.stop());

    test('a key another replica created meanwhile is merged; a key nobody created is claimed', async () => {
      const dir = tempDir();
      const url = await stores.fresh();
      const other = openStore(url, systemClock, { failOpen: { journalPath: join(dir.path, 'other.db'), timeoutMs: 5000 } });
      let replica: ReturnType<typeof openStore> | undefined;
      try {
        await other.init?.();
        // This replica was cut off: its journal answered both keys provisionally.
        const cut = new Journal(join(dir.path, 'cut.db'), systemClock);
        for (const key of ['dedup:made-by-other', 'dedup:made-by-nobody']) assert.equal((await cut.incidents.decide(claim(key))).outcome.kind, 'created');
        await cut.close();
        // Meanwhile the other replica created one of them in the shared store.
        assert.equal((await other.incidents.decide(claim('dedup:made-by-other'))).outcome.kind, 'created');
        // Back: the replica starts on the same journal and replays it.
        const outcomes: Array<ReconcileOutcome | 'expired' | 'quarantined'> = [];
        replica = openStore(url, systemClock, {
          failOpen: {
            journalPath: join(dir.path, 'cut.db'),
            timeoutMs: 5000,
            probeIntervalMs: 20,
            recoverAfter: 1,
            events: { reconciled: (o) => outcomes.push(o) },
          },
        });
        await replica.init?.();
        await until(
          () => outcomes.length >= 2,
          20_000,
          () => `outcomes so far: ${outcomes.join(', ')}`,
        );
        assert.deepEqual(outcomes.sort(), ['claimed', 'merged']);
        const merged = await other.incidents.get('acme', 'dedup:made-by-other');
        assert.equal(merged?.refires, 1, "the replayed copy counts as a re-fire of the other replica's record");
        assert.ok(await other.incidents.get('acme', 'dedup:made-by-nobody'), 'the claimed key is live in the shared store');
      } finally {
        await replica?.close();
        await other.close();
        dir.remove();
      }
    });
  });
