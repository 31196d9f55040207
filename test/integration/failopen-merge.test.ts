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

    // Planted fault it catches: the replay's merge taking the journal's fingerprint over a later one of the store's.
    test("a merge keeps the store's state when the store saw the key after the journal did, and sends it again; else it sends the journal's", async () => {
      const dir = tempDir();
      const url = await stores.fresh();
      const other = openStore(url, systemClock, { failOpen: { journalPath: join(dir.path, 'other.db'), timeoutMs: 5000 } });
      let replica: ReturnType<typeof openStore> | undefined;
      const withOutbox = (key: string, severity: string) => ({
        ...claim(key),
        fingerprint: `${severity}|0`,
        outbox: { severity, summary: severity, data: {} },
      });
      const pause = () => new Promise((r) => setTimeout(r, 50));
      try {
        await other.init?.();
        // journal-newer: the store had MAJOR, then the cut replica's journal saw MINOR. store-newer: the reverse.
        // same-state: the store had MAJOR, then the journal saw MAJOR too; its create, owed, may be in flight.
        for (const key of ['dedup:journal-newer', 'dedup:same-state'])
          assert.equal((await other.incidents.decide(withOutbox(key, 'MAJOR'))).outcome.kind, 'created');
        await pause();
        const cut = new Journal(join(dir.path, 'cut.db'), systemClock);
        // As a replica failing open decides: in the journal, noting what it answered (the replay sends its state).
        for (const [key, severity] of [
          ['dedup:journal-newer', 'MINOR'],
          ['dedup:store-newer', 'MINOR'],
          ['dedup:same-state', 'MAJOR'],
        ] as const) {
          const c = withOutbox(key, severity);
          await cut.decideRemembering(c);
        }
        await cut.close();
        await pause();
        assert.equal((await other.incidents.decide(withOutbox('dedup:store-newer', 'MAJOR'))).outcome.kind, 'created');
        await pause();
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
          () => outcomes.length >= 3,
          20_000,
          () => `outcomes so far: ${outcomes.join(', ')}`,
        );
        assert.deepEqual(outcomes, ['merged', 'merged', 'merged']);
        assert.equal((await other.incidents.get('acme', 'dedup:journal-newer'))?.fingerprint, 'MINOR|0', "the journal's later arrival wins");
        assert.equal((await other.incidents.get('acme', 'dedup:store-newer'))?.fingerprint, 'MAJOR|0', "the store's later arrival stays");
        while ((await other.deliveries.fanOut(['hook'], 100)) > 0);
        const sent: string[] = [];
        for (let batch = await other.deliveries.leaseDue('w', 60_000, 100); batch.length > 0; batch = await other.deliveries.leaseDue('w', 60_000, 100)) {
          for (const d of batch) {
            sent.push(`${d.entry.key} ${d.entry.action} ${d.entry.severity}`);
            await other.deliveries.settle(d, { outcome: 'delivered' });
          }
        }
        assert.deepEqual(
          sent.sort(),
          [
            'dedup:journal-newer create MAJOR',
            'dedup:journal-newer update MINOR',
            'dedup:same-state create MAJOR',
            'dedup:same-state update MAJOR',
            'dedup:store-newer create MAJOR',
            'dedup:store-newer update MAJOR',
          ],
          "the replay sends the journal's newer state (the same state too, after a create it owed), and the store's newer state again, never the journal's older one",
        );
      } finally {
        await replica?.close();
        await other.close();
        dir.remove();
      }
    });

    // Planted fault it catches: a restarted replica sending its journal's create before it heard from the store.
    test('a replica restarted with a journal sends none of its creates while the store answers: the replay hands them over', async () => {
      const dir = tempDir();
      const url = await stores.fresh();
      let replica: ReturnType<typeof openStore> | undefined;
      try {
        const cut = new Journal(join(dir.path, 'cut.db'), systemClock);
        const c = { ...claim('dedup:from-before'), outbox: { severity: 'MAJOR', summary: 'm', data: {} } };
        await cut.decideRemembering(c);
        await cut.close();
        let back = false;
        replica = openStore(url, systemClock, {
          failOpen: {
            journalPath: join(dir.path, 'cut.db'),
            timeoutMs: 5000,
            probeIntervalMs: 50,
            recoverAfter: 3,
            events: { degraded: (on) => (back = !on) },
          },
        });
        await replica.init?.();
        const sent: string[] = [];
        const pass = async () => {
          await replica!.deliveries.fanOut(['hook'], 100);
          for (const d of await replica!.deliveries.leaseDue('w', 60_000, 100)) {
            sent.push(`${d.id.startsWith('local:') ? 'journal' : 'store'} ${d.entry.key} ${d.entry.action}`);
            await replica!.deliveries.settle(d, { outcome: 'delivered' });
          }
        };
        // Delivery passes from the start, as the worker runs them, until the replay is done and a pass more.
        for (const started = Date.now(); !back && Date.now() - started < 20_000; ) {
          await pass();
          await new Promise((r) => setTimeout(r, 10));
        }
        assert.ok(back, 'the replica went back to the store');
        for (let i = 0; i < 20 && sent.length === 0; i++) {
          await pass();
          await new Promise((r) => setTimeout(r, 50));
        }
        assert.deepEqual(sent, ['store dedup:from-before create'], "the create goes once, from the store's line, never from the journal");
      } finally {
        await replica?.close();
        dir.remove();
      }
    });
  });
