/**
 * The nemesis's producers. Each lane owns its keys and sends one request at
 * a time, as a monitoring pipeline's connection does, so a key's operations
 * have one order: first firings, re-fires, severity changes and closes over
 * HTTP, to whichever replica is up; a request that gets no answer or a 5xx is
 * sent again (to another replica) until it is answered, as a producer
 * retries. One more lane publishes first firings and re-fires to NATS.
 */
import { jetstream } from '@nats-io/jetstream';
import { seededRandom } from '../../helpers/seed.js';
import type { Rig } from './rig.js';

export type Severity = 'MAJOR' | 'CRITICAL' | 'MINOR';

/** One operation a producer saw acknowledged. */
export interface Acked {
  key: string;
  op: 'fire' | 'close';
  /** for a fire: the severity sent, and the decision answered */
  severity?: Severity;
  decision?: string;
  provisional?: boolean;
  /** a close: 204 (closed) or 404 (not live) */
  status: number;
  at: number;
  /** the replica (its URL: a restarted one has a new port) that answered */
  via: string;
}

export interface WorkloadResult {
  acked: Acked[];
  /** keys whose last operation was never answered within the retry budget: their end state is unknown */
  unknown: Set<string>;
  /** keys published to NATS, each confirmed by the stream */
  natsKeys: Set<string>;
  requests: number;
}

const body = (prefix: string, k: number, severity: Severity) => ({
  element_id: `${prefix}-el-${k}`,
  fault_class: 'LOS',
  root_cause_id: `${prefix}-rc`,
  severity,
});

/** The dedup key the server gives `body` is learnt from its first answer; until then the lane names a key by its index. */
export async function runWorkload(rig: Rig, seed: number, ms: number, prefix: string, lanes = 6, keysPerLane = 6): Promise<WorkloadResult> {
  const acked: Acked[] = [];
  const unknown = new Set<string>();
  const keyOf = new Map<number, string>();
  const natsKeys = new Set<string>();
  let requests = 0;
  const end = Date.now() + ms;
  const send = async (
    method: 'POST' | 'DELETE',
    path: (base: string) => string,
    payload: unknown,
    lane: number,
  ): Promise<{ status: number; body: any; via: string; retried: boolean } | null> => {
    const give = Date.now() + 20_000;
    let sent = 0;
    for (let a = 0; Date.now() < give; a++) {
      const url = rig.urls[(lane + a) % rig.urls.length];
      if (!url) {
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      requests++;
      sent++;
      try {
        const res = await fetch(path(url), {
          method,
          headers: payload === undefined ? {} : { 'content-type': 'application/json' },
          ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
          signal: AbortSignal.timeout(10_000),
        });
        const text = await res.text();
        if (res.status < 500 && res.status !== 429) return { status: res.status, body: text ? JSON.parse(text) : null, via: url, retried: sent > 1 };
      } catch {
        // no answer: sent again below
      }
      await new Promise((r) => setTimeout(r, 50 + 50 * Math.min(a, 10)));
    }
    return null;
  };
  const http = Array.from({ length: lanes }, async (_, lane) => {
    const rnd = seededRandom(seed * 31 + lane);
    const open = new Map<number, Severity>();
    while (Date.now() < end) {
      const k = lane * keysPerLane + Math.floor(rnd() * keysPerLane);
      const roll = rnd();
      const key = keyOf.get(k);
      if (open.has(k) && roll < 0.1 && key) {
        const r = await send('DELETE', (u) => `${u}/v1/incidents/${encodeURIComponent(key)}`, undefined, lane);
        if (!r) {
          unknown.add(key);
          continue;
        }
        if (r.status !== 204 && r.status !== 404) throw new Error(`close of ${key} answered ${r.status}: ${JSON.stringify(r.body)}`);
        // A 404 to a close sent again: an earlier try, whose answer was lost (a 503 "may have been decided"), closed it.
        acked.push({ key, op: 'close', status: r.status === 404 && r.retried ? 204 : r.status, at: Date.now(), via: r.via });
        unknown.delete(key);
        open.delete(k);
      } else {
        const severity: Severity = open.has(k) && roll < 0.35 ? (['MAJOR', 'CRITICAL', 'MINOR'] as const)[Math.floor(rnd() * 3)]! : (open.get(k) ?? 'MAJOR');
        const r = await send('POST', (u) => `${u}/v1/incidents`, body(prefix, k, severity), lane);
        if (!r) {
          if (key) unknown.add(key);
          continue;
        }
        if (r.status !== 200) throw new Error(`incident ${k} answered ${r.status}: ${JSON.stringify(r.body)}`);
        const dk = r.body.dedup_key as string;
        keyOf.set(k, dk);
        acked.push({
          key: dk,
          op: 'fire',
          severity,
          decision: r.body.decision,
          provisional: r.body.provisional === true,
          status: 200,
          at: Date.now(),
          via: r.via,
        });
        unknown.delete(dk);
        open.set(k, severity);
      }
      await new Promise((r) => setTimeout(r, 10 + Math.floor(rnd() * 30)));
    }
  });
  const js = jetstream(rig.nc);
  const nats = (async () => {
    const rnd = seededRandom(seed * 31 + 997);
    while (Date.now() < end) {
      const k = Math.floor(rnd() * 20);
      try {
        await js.publish(rig.subject, JSON.stringify(body(`${prefix}-nats`, k, 'MAJOR')), { timeout: 5000 });
        natsKeys.add(`${prefix}-nats-el-${k}`);
      } catch {
        // not confirmed by the stream: not the server's to keep
      }
      await new Promise((r) => setTimeout(r, 40 + Math.floor(rnd() * 40)));
    }
  })();
  await Promise.all([...http, nats]);
  return { acked, unknown, natsKeys, requests };
}
