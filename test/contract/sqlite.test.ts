import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock, type ManualClock } from '../../src/core/clock.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { openStore, StoreUrlError } from '../../src/store/open.js';
import { tempDir } from '../helpers/tmp.js';
import { GRACE_UNITS, incidentStoreContract, type StoreFixture } from './incident-store.contract.js';
import { eventStoreContract } from './event-store.contract.js';
import { windowStoreContract } from './window-store.contract.js';
import { ticketStoreContract } from './ticket-store.contract.js';
import { heartbeatStoreContract } from './heartbeat-store.contract.js';
import { flapStoreContract } from './flap-store.contract.js';
import { groupStoreContract } from './group-store.contract.js';
import { requestStoreContract } from './request-store.contract.js';
import { silenceStoreContract } from './silence-store.contract.js';
import { inhibitorStoreContract } from './inhibitor-store.contract.js';
import { deliveryStoreContract } from './delivery-store.contract.js';
import { rulesContract } from './rules.contract.js';

const unit = 1000;
/** A fresh file per test, with a second connection on it as the peer. */
const fixture = (clock: ManualClock): StoreFixture => {
  const dir = tempDir();
  const path = join(dir.path, 'store.db');
  const options = { expiredGraceMs: GRACE_UNITS * unit };
  return {
    store: new SqliteStore(path, clock, options),
    openPeer: () => new SqliteStore(path, clock, options),
    clock,
    unit,
    advance: async (ms) => clock.advance(ms),
    cleanup: dir.remove,
  };
};

incidentStoreContract('sqlite', { peers: true }, fixture);
eventStoreContract('sqlite', fixture);
windowStoreContract('sqlite', fixture);
requestStoreContract('sqlite', fixture);
silenceStoreContract('sqlite', fixture);
inhibitorStoreContract('sqlite', fixture);
ticketStoreContract('sqlite', fixture);
heartbeatStoreContract('sqlite', fixture);
flapStoreContract('sqlite', fixture);
groupStoreContract('sqlite', fixture);
deliveryStoreContract('sqlite', fixture);
rulesContract('sqlite', fixture);

test('sqlite: decisions survive reopening the file', async () => {
  const dir = tempDir();
  const clock = manualClock();
  const path = join(dir.path, 'nested', 'store.db');
  try {
    const first = new SqliteStore(path, clock, { synchronous: 'full' });
    await first.incidents.decide({ tenant: 't', key: 'k', fingerprint: 'MAJOR|0', ttlMs: 60_000 });
    await first.close();
    const second = new SqliteStore(path, clock);
    const r = await second.incidents.decide({ tenant: 't', key: 'k', fingerprint: 'MAJOR|0', ttlMs: 60_000 });
    assert.equal(r.outcome.kind, 'unchanged');
    await second.close();
  } finally {
    dir.remove();
  }
});

test('sqlite: WAL stays small over many decisions (the file is checkpointed)', async () => {
  const dir = tempDir();
  const clock = manualClock();
  const path = join(dir.path, 'store.db');
  try {
    const store = new SqliteStore(path, clock);
    for (let batch = 0; batch < 20; batch++) {
      await Promise.all(
        Array.from({ length: 1000 }, (_, i) => store.incidents.decide({ tenant: 't', key: `k${batch}-${i}`, fingerprint: 'MAJOR|0', ttlMs: 60_000 })),
      );
    }
    const { statSync } = await import('node:fs');
    const wal = statSync(`${path}-wal`).size;
    // SQLite's auto-checkpoint restarts the WAL at ~1000 pages (4 MB); a WAL that
    // never checkpoints would hold every one of the 20,000 decisions.
    assert.ok(wal < 16 * 1024 * 1024, `WAL is ${wal} bytes`);
    await store.close();
  } finally {
    dir.remove();
  }
});

test('store URLs: clear errors for what is not a usable store', () => {
  const clock = manualClock();
  assert.throws(() => openStore('sqlite:', clock), StoreUrlError);
  assert.throws(() => openStore('sqlite:./x.db?synchronous=sometimes', clock), /normal or full/);
  assert.throws(() => openStore('sqlite:./x.db?journal=off', clock), /unknown/);
  assert.throws(() => openStore('postgres://127.0.0.1/test?schema=Bad-Name', clock), /schema="Bad-Name" must be lower-case/);
  assert.throws(() => openStore('postgres://', clock), /not a valid postgres:\/\/ URL/);
  assert.throws(() => openStore('postgres://127.0.0.1', clock), /give a host and a database/);
  assert.throws(() => openStore('redis+cluster://', clock), /not recognised/);
  assert.throws(() => openStore('mongodb://x', clock), /not recognised/);
});
