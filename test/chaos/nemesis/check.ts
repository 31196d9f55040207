/**
 * The nemesis's checker: what the receiver got, held against what the
 * producers were told. Each rule is the promise as a person on call would
 * state it:
 *   - one ticket per fault: per key and episode (a close ends one), one
 *     create Idempotency-Key, beside at most one provisional CREATE per
 *     replica (a replica failing open cannot know the store's count; its
 *     journal remembers what it answered, so it never answers two);
 *   - nothing lost: every acknowledged arrival reaches the receiver (a
 *     create for every key answered CREATE, and the key's last state: the
 *     severity last sent, or its close), unless a dead letter or
 *     `onceonly_store_data_lost_total` said it could not;
 *   - order kept per key: a key's creates, updates and closes arrive
 *     numbered in order (first arrivals of each Idempotency-Key);
 *   - Retry-After respected: after a 429 with `Retry-After: N` nothing of
 *     that key arrives sooner than N seconds later (unless the store said it
 *     lost its data: the floor is kept with the delivery; or the wait spans
 *     a store outage, when a replica that was not told sends from its journal).
 */
import type { Recorded } from '../../fakes/http-fake.js';
import type { WorkloadResult } from './workload.js';

export interface Loud {
  /** a replica counted a store that lost its data */
  dataLost: boolean;
  /** keys with a dead letter */
  deadLetters: Set<string>;
  /** store outages, from the fault to every replica back on the store (Date.now()) */
  outages?: ReadonlyArray<{ from: number; to: number }>;
}

/**
 * A replica failing open sends its journal's deliveries itself; one that was
 * not the replica told a Retry-After cannot know it while the store that
 * keeps the floor is away. A wait that overlaps an outage is not held
 * against the run (docs/reliability.md says so); every other one is.
 */
const OUTAGE_SLACK_MS = 2000;

/** How early a send after a 429 may arrive: the receiver stamps arrival, the replica its answer (the same machine's clock). */
const RETRY_AFTER_SLACK_MS = 50;

export function checkNemesis(work: WorkloadResult, requests: readonly Recorded[], loud: Loud): string[] {
  const out: string[] = [];
  const byKey = new Map<string, Recorded[]>();
  for (const r of requests) {
    const key = r.body?.key as string | undefined;
    if (!key) continue;
    let xs = byKey.get(key);
    if (!xs) byKey.set(key, (xs = []));
    xs.push(r);
  }
  const t0 = Math.min(...work.acked.map((a) => a.at), ...requests.map((r) => r.at));
  // What the producers were told and what the receiver got, in time order: the evidence under a violation.
  const trail = (key: string) =>
    [
      ...work.acked
        .filter((a) => a.key === key)
        .map((a) => ({ at: a.at, line: `sent ${a.op} ${a.severity ?? ''} → ${a.decision ?? a.status}${a.provisional ? ' (provisional)' : ''}` })),
      ...(byKey.get(key) ?? []).map((r) => ({
        at: r.at,
        line: `    receiver: ${String(r.headers['idempotency-key']).split(':').slice(-2).join(':')} ${r.body.severity}`,
      })),
    ]
      .sort((x, y) => x.at - y.at)
      .map((x) => `    ${String(x.at - t0).padStart(6)} ms ${x.line}`)
      .join('\n');
  const excused = (key: string) => loud.dataLost || loud.deadLetters.has(key);

  // One ticket per fault, and order.
  const closesAcked = new Map<string, number>();
  for (const a of work.acked) if (a.op === 'close' && a.status === 204) closesAcked.set(a.key, (closesAcked.get(a.key) ?? 0) + 1);
  // At most one provisional CREATE per key per replica between two closes (the whole run is one outage for the journal's memory).
  const provisionalCreates = new Map<string, number>();
  const perReplica = new Map<string, number>();
  for (const a of work.acked) {
    if (a.op === 'close' && a.status === 204) for (const k of [...perReplica.keys()]) if (k.startsWith(`${a.key} `)) perReplica.delete(k);
    if (a.decision !== 'CREATE' || !a.provisional) continue;
    provisionalCreates.set(a.key, (provisionalCreates.get(a.key) ?? 0) + 1);
    const id = `${a.key} ${a.via}`;
    perReplica.set(id, (perReplica.get(id) ?? 0) + 1);
    if (perReplica.get(id) === 2 && !loud.dataLost) out.push(`${a.key}: two provisional CREATEs from ${a.via} in one episode\n${trail(a.key)}`);
  }
  for (const [key, xs] of byKey) {
    const firsts: Recorded[] = [];
    const seen = new Set<string>();
    for (const r of xs) {
      const id = String(r.headers['idempotency-key']);
      if (seen.has(id)) continue;
      seen.add(id);
      firsts.push(r);
    }
    const creates = firsts.filter((r) => r.body.action === 'create');
    const episodes = (closesAcked.get(key) ?? 0) + 1;
    const allowed = episodes + (provisionalCreates.get(key) ?? 0);
    if (creates.length > allowed && !loud.dataLost) {
      out.push(
        `${key}: ${creates.length} create Idempotency-Keys (${creates.map((r) => r.headers['idempotency-key']).join(', ')}) for ${episodes} episode(s) and ${provisionalCreates.get(key) ?? 0} provisional CREATE(s)\n${trail(key)}`,
      );
    }
    const last = new Map<string, number>();
    for (const r of firsts) {
      const m = /:(create|update|close):(\d+)$/.exec(String(r.headers['idempotency-key']));
      if (!m) {
        out.push(`${key}: Idempotency-Key ${String(r.headers['idempotency-key'])} is not <key>:<action>:<n>`);
        continue;
      }
      const n = Number(m[2]);
      if (n <= (last.get(m[1]!) ?? 0) && !loud.dataLost) out.push(`${key}: ${m[1]}:${n} arrived after ${m[1]}:${last.get(m[1]!)}\n${trail(key)}`);
      last.set(m[1]!, Math.max(n, last.get(m[1]!) ?? 0));
    }
  }

  // Nothing lost: every key answered CREATE has a create, and each key's last state arrived.
  const lastOp = new Map<string, WorkloadResult['acked'][number]>();
  const created = new Set<string>();
  for (const a of work.acked) {
    lastOp.set(a.key, a);
    if (a.decision === 'CREATE') created.add(a.key);
  }
  for (const key of created) {
    if (excused(key)) continue;
    if (!(byKey.get(key) ?? []).some((r) => r.body.action === 'create')) out.push(`${key}: answered CREATE, and no create reached the receiver`);
  }
  for (const [key, a] of lastOp) {
    if (excused(key) || work.unknown.has(key)) continue;
    const xs = (byKey.get(key) ?? []).filter((r) => r.body.action !== undefined);
    const final = xs[xs.length - 1];
    if (a.op === 'close') {
      if (a.status === 204 && final?.body.action !== 'close')
        out.push(`${key}: closed (204), and the receiver's last word is ${final ? final.body.action : 'nothing'}\n${trail(key)}`);
    } else if (!final || final.body.action === 'close' || final.body.severity !== a.severity) {
      out.push(
        `${key}: last sent ${a.severity} (answered ${a.decision}${a.provisional ? ', provisional' : ''}), the receiver's last word is ${final ? `${final.body.action} ${final.body.severity}` : 'nothing'}\n${trail(key)}`,
      );
    }
  }
  // Every fault published to NATS and confirmed by the stream has a create.
  const natsCreated = new Set(requests.filter((r) => r.body?.action === 'create').map((r) => String(r.body?.data?.element_id ?? '')));
  for (const el of work.natsKeys) {
    if (!natsCreated.has(el) && !loud.dataLost) out.push(`NATS ${el}: confirmed by the stream, and no create reached the receiver`);
  }

  // Retry-After. A floor is kept with its delivery in the store: a store that lost its data (said so) lost the floors too.
  for (const [key, xs] of loud.dataLost ? [] : byKey) {
    for (let i = 0; i < xs.length; i++) {
      const r = xs[i]!;
      const wait = r.answeredRetryAfterS;
      if (wait === undefined) continue;
      const next = xs[i + 1];
      const overOutage = (loud.outages ?? []).some((o) => r.at <= o.to + OUTAGE_SLACK_MS && next !== undefined && next.at >= o.from);
      if (next && !overOutage && next.at < r.at + wait * 1000 - RETRY_AFTER_SLACK_MS) {
        out.push(
          `${key}: ${String(next.headers['idempotency-key']).split(':').slice(-2).join(':')} sent ${next.at - r.at} ms after ${String(r.headers['idempotency-key']).split(':').slice(-2).join(':')} was answered 429 with Retry-After: ${wait}`,
        );
      }
    }
  }
  return out;
}
