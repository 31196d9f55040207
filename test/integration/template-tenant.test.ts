/**
 * The caller's tenant is authoritative wherever labels are seen: a producer
 * that sends a label named `tenant` (or `kind`, `dedup_key`, `oo_severity`)
 * changes neither what a template renders for them nor where the route
 * sends the alert.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startSink } from '../fakes/http-fake.js';
import { deliveryHarness } from '../helpers/delivery.js';
import { closedAfterEach } from '../helpers/keep.js';

const keep = closedAfterEach();

test("a producer's tenant, kind, dedup_key and oo_severity labels never stand for onceonly's, in templates or routes", async () => {
  const sink = keep(await startSink(200, {}));
  const h = keep(
    deliveryHarness({
      adapters: [
        {
          name: 'hook',
          type: 'webhook',
          url: `${sink.url}/hook`,
          fields: { t: '{{ labels.tenant }}', u: '{{ tenant }}', k: '{{ labels.kind }}', d: '{{ labels.dedup_key }}', s: '{{ labels.oo_severity }}' },
        },
        { name: 'globex_pager', type: 'webhook', url: `${sink.url}/globex` },
      ],
      route: { receiver: 'hook', routes: [{ receiver: 'globex_pager', matchers: ['tenant="globex"'] }] },
    }),
  );
  const { dedup_key: key } = await h.incidents.decideIncident(
    {
      element_id: 'e1',
      fault_class: 'LOS',
      root_cause_id: 'rc',
      severity: 'MINOR',
      labels: { tenant: 'globex', kind: 'violation', dedup_key: 'dedup:0', oo_severity: 'CRITICAL' },
    },
    'acme',
  );
  await h.drain();
  assert.deepEqual(
    sink.requests.map((r) => r.path),
    ['/hook'],
    "routed as acme's, not globex's",
  );
  assert.deepEqual(sink.requests[0]!.body.fields, { t: 'acme', u: 'acme', k: 'incident', d: key, s: 'MINOR' });
});
