import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inProcessServer } from '../helpers/server.js';

/**
 * /metrics is open to anyone who reaches the port. By default no series
 * names a tenant or a heartbeat (they say who the customers are and what
 * they run); `metrics.tenant_labels: true` turns the heartbeat labels on.
 */
const TOKEN = 'token-of-tenant-initech-01';
const config = (labels: boolean | null) => `
tenants:
  - { id: initech-secret-customer, tokens: [${TOKEN}] }
heartbeats:
  - { name: payroll-batch-job, tenant: initech-secret-customer, interval_seconds: 60, grace_seconds: 30 }
${labels === null ? '' : `metrics: { tenant_labels: ${labels} }`}
`;

for (const labels of [null, true] as const) {
  test(`metrics.tenant_labels ${labels === null ? 'unset' : labels}: /metrics ${labels ? 'labels heartbeats by tenant and name' : 'names no tenant and no heartbeat'}`, async () => {
    const s = await inProcessServer({ store: 'memory', config: config(labels), heartbeatCheckMs: 3_600_000 });
    try {
      const ping = await fetch(`${s.url}/v1/heartbeats/payroll-batch-job`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(ping.status, 202, await ping.text());
      await s.heartbeats.check();
      s.clock.advance(120_000);
      await s.heartbeats.check();
      const metrics = await (await fetch(`${s.url}/metrics`)).text();
      if (labels) {
        assert.match(metrics, /^onceonly_heartbeats_missed\{tenant="initech-secret-customer"\} 1$/m);
        assert.match(metrics, /^onceonly_heartbeat_last_ping_timestamp_seconds\{tenant="initech-secret-customer",heartbeat="payroll-batch-job"\} \d+/m);
      } else {
        assert.doesNotMatch(metrics, /initech|payroll/, 'no tenant or heartbeat name');
        assert.match(metrics, /^onceonly_heartbeats_missed 1$/m, 'the missed count is still there, over all tenants');
      }
    } finally {
      await s.stop();
    }
  });
}
