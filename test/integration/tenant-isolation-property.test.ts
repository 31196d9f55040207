/**
 * Tenant isolation at the receivers, as a property: for seeded random
 * tenants sending the same faults (so the same keys), with labels a
 * template copies into the ticket (including each other's identity labels
 * and correlation ids, and onceonly's reserved words), random re-fires,
 * severity changes and closes, the strict Jira and ServiceNow stand-ins end
 * with every ticket owned by exactly one (tenant, key), and:
 *   - nothing of tenant A is ever written on a ticket made for tenant B
 *     (each tenant's summaries carry a token of its own);
 *   - each (tenant, key)'s newest ticket is open exactly while its key is live,
 *     so no tenant's close ends another's ticket and none is adopted across.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startJiraFake } from '../fakes/jira-fake.js';
import { startServicenowFake } from '../fakes/servicenow-fake.js';
import { deliveryHarness } from '../helpers/delivery.js';
import { seededRandom, testSeed } from '../helpers/seed.js';

const SEED = testSeed('test/integration/tenant-isolation-property.test.ts');
const ROUNDS = 4;
const OPS = 40;

const digest = (tenant: string, key: string) => createHash('sha256').update(`${tenant}\u0000incident\u0000${key}`).digest('hex');
const jiraLabel = (tenant: string, key: string) => `onceonly-${digest(tenant, key).slice(0, 24)}`;
const correlation = (tenant: string, key: string) => `onceonly-${digest(tenant, key).slice(0, 40)}`;

for (let round = 0; round < ROUNDS; round++) {
  const seed = SEED + round;
  test(`tenants never touch each other's tickets at Jira and ServiceNow (seed ${seed})`, async () => {
    const rnd = seededRandom(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const suffix = Math.floor(rnd() * 1e6).toString(36);
    // Names that share prefixes, as real ones do.
    const tenants = [`acme-${suffix}`, `acme-${suffix}-eu`, `beta-${suffix}`];
    const faults = [0, 1, 2].map((i) => ({ element_id: `olt-${i}`, fault_class: 'LOS', root_cause_id: `cut-${i}` }));
    const [jira, snow] = await Promise.all([startJiraFake(), startServicenowFake()]);
    const h = deliveryHarness({
      adapters: [
        {
          name: 'jira',
          type: 'jira',
          base_url: jira.url,
          project: 'QA',
          username: 'bot@example.com',
          api_token: 'api-token',
          fields: { labels: '{{ labels.tag }} {{ labels.other }}' },
        },
        {
          name: 'snow',
          type: 'servicenow',
          instance_url: snow.url,
          username: 'onceonly',
          password: 'secret',
          fields: { description: '{{ labels.tag }} {{ labels.other }} {{ tenant }}', category: '{{ labels.tenant }}' },
        },
      ],
    });
    try {
      const keyOf = new Map<string, string>();
      const live = new Map<string, boolean>();
      for (let op = 0; op < OPS; op++) {
        const tenant = pick(tenants);
        const f = faults[Math.floor(rnd() * faults.length)]!;
        const known = keyOf.get(`${tenant} ${f.element_id}`);
        if (known && live.get(`${tenant} ${known}`) && rnd() < 0.25) {
          assert.equal(await h.incidents.closeIncident(known, tenant), true);
          live.set(`${tenant} ${known}`, false);
        } else {
          const victim = pick(tenants.filter((t) => t !== tenant));
          const victimKey = keyOf.get(`${victim} ${f.element_id}`) ?? 'dedup:0';
          // Labels a template copies into the ticket: another tenant's identity, onceonly's reserved words, a tenant claim.
          const labels = {
            tag: pick([jiraLabel(victim, victimKey), correlation(victim, victimKey), 'onceonly', `team-${tenant}`]),
            other: pick(['onceonly-0123456789abcdef01234567', 'plain', `${victim}/${victimKey}`]),
            tenant: victim,
          };
          const severity = pick(['MAJOR', 'CRITICAL', 'MINOR'] as const);
          const r = await h.incidents.decideIncident({ ...f, severity, summary: `tok-${tenant} ${severity}`, labels }, tenant);
          keyOf.set(`${tenant} ${f.element_id}`, r.dedup_key);
          live.set(`${tenant} ${r.dedup_key}`, true);
        }
        await h.drain();
      }

      // Jira: every issue is one (tenant, key)'s, by onceonly's mark, and carries only that tenant's words.
      const owners = new Map<string, { tenant: string; key: string }>();
      for (const issue of jira.issues.values()) {
        const mark = issue.properties?.onceonly as { tenant: string; kind: string; key: string } | undefined;
        assert.ok(mark, `${issue.key} carries onceonly's mark`);
        owners.set(issue.key, mark);
        const words = [issue.fields.summary, issue.fields.description, ...issue.comments].join('\n');
        for (const t of tenants.filter((x) => x !== mark.tenant)) {
          assert.ok(!words.includes(`tok-${t} `), `${issue.key} (${mark.tenant}) holds words of ${t}`);
        }
        assert.ok(issue.fields.labels.includes(jiraLabel(mark.tenant, mark.key)), `${issue.key} carries its own identity label`);
        for (const l of issue.fields.labels) {
          if (l.startsWith('onceonly-')) assert.equal(l, jiraLabel(mark.tenant, mark.key), `${issue.key} carries no other identity label`);
        }
      }
      // ServiceNow: every record is one (tenant, key)'s, by its correlation id, and carries only that tenant's words.
      const byCorrelation = new Map<string, { tenant: string; key: string }>();
      for (const [k, t] of [...keyOf.entries()].map(([tk, key]) => [key, tk.split(' ')[0]!] as const))
        byCorrelation.set(correlation(t, k), { tenant: t, key: k });
      for (const rec of snow.records.values()) {
        const owner = byCorrelation.get(rec.correlation_id ?? '');
        assert.ok(owner, `${rec.number}: correlation id ${rec.correlation_id} is one of the (tenant, key)s sent`);
        for (const t of tenants.filter((x) => x !== owner.tenant)) {
          assert.ok(!String(rec.short_description ?? '').includes(`tok-${t} `), `${rec.number} (${owner.tenant}) holds words of ${t}`);
        }
        // The template's `tenant` is the caller's, whatever label the producer sent under that name.
        assert.equal(
          String(rec.description ?? '')
            .split(' ')
            .at(-1),
          owner.tenant,
          `${rec.number}: {{ tenant }} rendered as its owner`,
        );
      }
      // Each (tenant, key)'s newest ticket is open exactly while the key is live.
      for (const [tk, isLive] of live) {
        const [tenant, key] = tk.split(' ') as [string, string];
        const issues = [...jira.issues.values()].filter((i) => owners.get(i.key)?.tenant === tenant && owners.get(i.key)?.key === key);
        const newest = issues[issues.length - 1];
        assert.ok(newest, `${tenant} ${key} has a Jira issue`);
        assert.equal(newest.fields.status.statusCategory.key !== 'done', isLive, `${tenant} ${key}: Jira ${newest.key} open = live (${isLive})`);
        const records = [...snow.records.values()].filter((r) => r.correlation_id === correlation(tenant, key));
        const current = records[records.length - 1];
        assert.ok(current, `${tenant} ${key} has a ServiceNow record`);
        assert.equal(
          !['6', '7', '8'].includes(current.state),
          isLive,
          `${tenant} ${key}: ServiceNow ${current.number} open = live (${isLive}), state ${current.state}`,
        );
      }
    } finally {
      await h.close();
      await Promise.all([jira.close(), snow.close()]);
    }
  });
}
