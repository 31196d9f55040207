import { randomUUID } from 'node:crypto';
import type { Config } from '../config/schema.js';
import { FOREVER_MS } from '../config/schema.js';
import { manualClock, systemClock, type Clock } from '../core/clock.js';
import type { Matcher } from '../core/matcher.js';
import type { OutboxPayload } from '../core/outbox.js';
import type { IncidentIdentity } from '../core/identity.js';
import type { Adapter } from '../delivery/adapter.js';
import { fieldsOf } from '../delivery/dry-run.js';
import { HttpFailure } from '../delivery/http.js';
import { AdapterRegistry } from '../delivery/registry.js';
import { DeliveryWorker } from '../delivery/worker.js';
import { Deduplicator } from '../engine/deduplicator.js';
import { GroupApplier, groupingActive } from '../groups/groups.js';
import { noiseControls } from '../mute/pipeline.js';
import { historyObserver } from '../history/deliveries.js';
import { countOutcomes, firstDifference, noCounts, outcomeOf, type KeyOutcome, type OutcomeCounts } from '../history/outcome.js';
import { HistoryRecorder } from '../history/recorder.js';
import { incidentTtlSeconds } from '../inputs/incident/ttl.js';
import { Inhibition } from '../mute/inhibition.js';
import { SilenceCache } from '../mute/silence-cache.js';
import type { DedupStore, HistoryKey, StoredHistoryEvent } from '../store/contract/index.js';
import { MemoryStore } from '../store/memory/memory-store.js';

/** The most keys one simulation replays: past it, a shorter span is asked for. */
export const SIMULATE_MAX_KEYS = 100_000;

/**
 * How long a muted or held delivery waits in a simulation before the gate
 * looks again (the server looks every second): a release lands up to this
 * much later than it did, which changes an outcome only where another change
 * of that key arrived inside that minute.
 */
const RECHECK_MS = 60_000;

export interface SimulateOptions {
  /** the store whose histories are replayed (read only) */
  source: DedupStore;
  /** the candidate config */
  config: Config;
  /** the span's start (ms); it ends now */
  since: number;
  clock?: Clock;
  /** one silence more, over the whole span, in every tenant: these matchers */
  silence?: readonly Matcher[];
  maxKeys?: number;
}

export interface KeyDifference {
  tenant: string;
  key: string;
  /** what the key's last arrival was about (its element and fault class, or its summary) */
  about: string;
  first: string;
  recorded: KeyOutcome;
  candidate: KeyOutcome;
}

export interface SimulationReport {
  since: string;
  until: string;
  keys: { replayed: number; not_replayed: number; differ: number; approximate: number };
  adapters: Record<string, { recorded: OutcomeCounts; candidate: OutcomeCounts }>;
  differences: KeyDifference[];
  /** keys whose replay could not be exact, and why */
  approximate: Array<{ tenant: string; key: string; why: string }>;
}

export class SimulateError extends Error {
  readonly code = 'simulate_failed';
}

interface Arrival {
  severity: string;
  summary?: string;
  data: Record<string, unknown>;
}

/** One thing to do at one time in the replay, in the order the recorded history had it. */
interface Step {
  at: number;
  order: number;
  run: (dedup: Deduplicator) => Promise<unknown>;
}

interface Replayable {
  id: HistoryKey;
  /** the events from the key's first recorded arrival on */
  events: StoredHistoryEvent[];
  about: string;
}

const idOf = (k: HistoryKey) => `${k.tenant}\u0000${k.key}`;

/**
 * Replays the recorded arrivals of a span, in memory, through a candidate
 * config (its TTLs, routes, fields, maintenance, inhibition, grouping and
 * holds, and the silences in force then), and compares what would have
 * reached each receiver with what did. It writes nothing to the source
 * store and calls no receiver: the candidate's adapters are built, asked
 * whether they take each entry and render their fields, and answer
 * delivered.
 */
export async function simulate(o: SimulateOptions): Promise<SimulationReport> {
  const now = (o.clock ?? systemClock).now();
  const max = o.maxKeys ?? SIMULATE_MAX_KEYS;
  const ids = await o.source.history.keysSince(o.since, max + 1);
  if (ids.length > max) throw new SimulateError(`more than ${max.toLocaleString('en')} keys have a history in this span: give a shorter --since`);

  const replayable: Replayable[] = [];
  const groups: HistoryKey[] = [];
  const recorded = new Map<string, KeyOutcome>();
  let notReplayed = 0;
  for (const id of ids) {
    const events = await o.source.history.read(id.tenant, id.key);
    const start = events.findIndex((e) => e.type === 'decision' && e.arrival !== undefined && typeof e.fingerprint === 'string');
    if (start >= 0) {
      const r = { id, events: events.slice(start), about: aboutOf(events) };
      replayable.push(r);
      recorded.set(idOf(id), outcomeOf(r.events));
    } else if (id.key.startsWith('group:')) {
      groups.push(id);
      recorded.set(idOf(id), outcomeOf(events));
    } else notReplayed++;
  }

  const approximate: SimulationReport['approximate'] = [];
  const steps: Step[] = [];
  // One push at a time: a long run of repeats can make more steps than a spread's arguments may be.
  for (const r of replayable) for (const step of stepsOf(r, o.config, (why) => approximate.push({ ...r.id, why }))) steps.push(step);
  steps.sort((a, b) => a.at - b.at || a.order - b.order);

  const start = steps.reduce((m, s) => Math.min(m, s.at), now);
  const replayed = await replay(o, steps, start, now, [...new Set(replayable.map((r) => r.id.tenant))]);

  const candidate = new Map<string, KeyOutcome>();
  for (const [id, events] of replayed) candidate.set(id, outcomeOf(events));
  for (const g of groups) candidate.set(idOf(g), candidate.get(idOf(g)) ?? outcomeOf([]));
  const about = new Map(replayable.map((r) => [idOf(r.id), r.about]));
  const differences: KeyDifference[] = [];
  const keys = [...new Set([...recorded.keys(), ...candidate.keys()])].sort();
  const none = outcomeOf([]);
  for (const id of keys) {
    const [tenant = '', key = ''] = id.split('\u0000');
    const was = recorded.get(id) ?? none;
    const is = candidate.get(id) ?? none;
    const first = firstDifference(was, is);
    if (first !== null) differences.push({ tenant, key, about: about.get(id) ?? '', first, recorded: was, candidate: is });
  }
  const [before, after] = [countOutcomes(recorded.values()), countOutcomes(candidate.values())];
  const adapters: SimulationReport['adapters'] = {};
  for (const name of [...new Set([...Object.keys(before), ...Object.keys(after), ...o.config.adapters.map((a) => a.name)])].sort())
    adapters[name] = { recorded: before[name] ?? noCounts(), candidate: after[name] ?? noCounts() };
  return {
    since: new Date(o.since).toISOString(),
    until: new Date(now).toISOString(),
    keys: { replayed: replayable.length, not_replayed: notReplayed, differ: differences.length, approximate: approximate.length },
    adapters,
    differences,
    approximate,
  };
}

/** What a key is about, for a reader: its last arrival's element and fault class, or its summary. */
function aboutOf(events: readonly StoredHistoryEvent[]): string {
  const last = events.findLast((e) => e.arrival !== undefined)?.arrival as Arrival | undefined;
  if (!last) return '';
  const d = last.data;
  const parts = [d.element_id, d.fault_class].filter((p): p is string => typeof p === 'string' && p !== '');
  return parts.length > 0 ? parts.join(' · ') : (last.summary ?? '');
}

/**
 * A key's recorded arrivals as replay steps: each create or change with
 * what it arrived with, each run of repeats as arrivals close enough to keep
 * the key alive as they did, and each close. The candidate's TTL applies to
 * incidents (`dedup:` keys); other keys (Alertmanager, PagerDuty,
 * heartbeats) keep the lifetime they were given.
 */
function stepsOf(r: Replayable, config: Config, approximate: (why: string) => void): Step[] {
  const { tenant, key } = r.id;
  const steps: Step[] = [];
  let order = 0;
  const at = (t: number, run: Step['run']) => steps.push({ at: t, order: order++, run });
  let last: { arrival: Arrival; fingerprint: string; ttlMs: number } | null = null;
  const ttlOf = (arrival: Arrival, recordedMs: number) => {
    if (!key.startsWith('dedup:')) return recordedMs;
    if (config.incidents.retention === 'forever') return FOREVER_MS;
    return incidentTtlSeconds(config.incidents, arrival.data as unknown as IncidentIdentity) * 1000;
  };
  const claim = (a: NonNullable<typeof last>) => (dedup: Deduplicator) =>
    dedup.decide({
      tenant,
      key,
      fingerprint: a.fingerprint,
      ttlMs: a.ttlMs,
      outbox: { severity: a.arrival.severity, summary: a.arrival.summary ?? '', data: structuredClone(a.arrival.data) } satisfies OutboxPayload,
    });
  if (r.events[0]?.decision !== 'CREATE') approximate('its history was cut to history.max_events: the replay starts at the oldest change it keeps');
  for (const e of r.events) {
    if (e.type === 'closed') {
      at(e.at, (dedup) => dedup.closeKey(tenant, key, typeof e.resolved_at === 'number' ? e.resolved_at : undefined));
      continue;
    }
    if (e.type !== 'decision') continue;
    if (e.arrival !== undefined && typeof e.fingerprint === 'string') {
      const arrival = e.arrival as Arrival;
      const a = { arrival, fingerprint: e.fingerprint, ttlMs: ttlOf(arrival, Number(e.ttl_ms ?? FOREVER_MS)) };
      last = a;
      at(e.at, claim(a));
      continue;
    }
    if (e.decision !== 'SUPPRESS' || !last) continue;
    // A folded run: its first and last arrival, and between them arrivals no further apart than the
    // TTL, so the key lives through it as it did. A run with a gap longer than the candidate's TTL
    // would have expired somewhere in it: once is replayed, after its first arrival.
    const a = last;
    const [first, end, gap] = [Number(e.first_at ?? e.at), Number(e.last_at ?? e.at), Number(e.max_gap_ms ?? 0)];
    // At most about the run's own count of arrivals, however short the candidate's TTL.
    const stride = Math.max(1, a.ttlMs - 1, gap > a.ttlMs ? Math.ceil((end - first) / Math.max(1, Number(e.count ?? 1))) : 0);
    let t = first;
    at(t, claim(a));
    if (gap > a.ttlMs) {
      approximate(
        `a run of ${e.count} repeats had a gap of ${gap} ms, longer than the candidate's TTL of ${a.ttlMs} ms: it would expire inside the run, once or more`,
      );
      t = Math.min(end, first + gap);
      at(t, claim(a));
    }
    while (t < end) {
      t = Math.min(end, t + stride);
      at(t, claim(a));
    }
  }
  return steps;
}

/**
 * Runs the steps on a memory store with the candidate's wiring, on a clock
 * that jumps from step to step and to each delivery's due time between
 * them; answers every key's replayed history.
 */
async function replay(o: SimulateOptions, steps: readonly Step[], start: number, end: number, tenants: readonly string[]) {
  const clock = manualClock(start);
  const mem = new MemoryStore(clock);
  const config = () => o.config;
  for (const s of await o.source.silences.list(null)) await mem.silences.create(s, { open: Number.MAX_SAFE_INTEGER, ended: Number.MAX_SAFE_INTEGER }, start);
  if (o.silence && o.silence.length > 0)
    for (const tenant of tenants)
      await mem.silences.create(
        {
          id: randomUUID(),
          tenant,
          matchers: [...o.silence],
          startsAt: start,
          endsAt: end + 1,
          createdBy: 'onceonly simulate',
          comment: 'the --silence of this simulation',
          updatedAt: start,
        },
        { open: Number.MAX_SAFE_INTEGER, ended: Number.MAX_SAFE_INTEGER },
        start,
      );
  // Every silence loaded once, ended ones too (they muted what arrived while they lasted).
  const silences = new SilenceCache(mem.silences);
  await silences.start();
  silences.stop();
  const recorder = new HistoryRecorder({
    store: mem.history,
    limits: () => ({ maxEvents: Number.MAX_SAFE_INTEGER, keepMs: FOREVER_MS }),
    clock,
    maxWaiting: Number.MAX_SAFE_INTEGER,
  });
  const inhibition = new Inhibition(() => o.config.inhibit_rules, mem.inhibitors, mem.incidents);
  const noise = noiseControls({ config, flaps: mem.flaps, silences, inhibition });
  const muteSource = noise.mutes;
  const dedup = new Deduplicator({
    store: mem,
    config,
    mutes: { source: muteSource, now: () => clock.now() },
    inhibition,
    flaps: { store: mem.flaps, now: () => clock.now() },
    history: { recorder, replica: 'simulate' },
  });
  const registry = new AdapterRegistry(() => o.config.adapters, { clock, tickets: mem.tickets, lookups: () => o.config.lookups });
  const adapters = new Map([...registry.current()].map(([name, a]) => [name, simulated(a, o.config)]));
  const groups = new GroupApplier({ groups: mem.groups, incidents: mem.incidents, config, clock });
  const worker = new DeliveryWorker({
    store: mem.deliveries,
    adapters: () => adapters,
    policy: () => ({ maxRetries: 0, baseMs: 1, maxMs: 1 }),
    random: () => 0,
    monotonic: () => 0,
    now: () => clock.now(),
    mutes: { source: muteSource, now: () => clock.now(), recheckMs: RECHECK_MS },
    holds: noise.holds,
    groups: () => (groupingActive(o.config) ? groups : null),
    observer: historyObserver(recorder, (t, id) => silences.silence(t, id)),
  });
  const drain = async () => {
    while ((await worker.runOnce()) > 0) {}
  };
  // What falls due before `t`: each at its own time.
  const settleUntil = async (t: number) => {
    for (let next = mem.deliveries.nextDueAt(); next !== null && next < t; next = mem.deliveries.nextDueAt()) {
      if (next <= clock.now() && (await worker.runOnce()) === 0) clock.set(clock.now() + 1);
      clock.set(Math.max(clock.now(), next));
      await drain();
    }
  };
  // Arrivals of one instant all go before what falls due at it: the server, handed a burst, decides it
  // before its worker's next pass.
  for (let i = 0; i < steps.length; ) {
    const at = steps[i]!.at;
    await settleUntil(at);
    clock.set(Math.max(clock.now(), at));
    for (; i < steps.length && steps[i]!.at === at; i++) await steps[i]!.run(dedup);
    await drain();
  }
  await settleUntil(end);
  await recorder.close();
  await registry.close();
  const out = new Map<string, StoredHistoryEvent[]>();
  for (const k of await mem.history.keysSince(0, Number.MAX_SAFE_INTEGER)) out.set(idOf(k), await mem.history.read(k.tenant, k.key));
  await mem.close();
  return out;
}

/**
 * The candidate's adapter as a simulation calls it: it takes what the real
 * one takes and renders its fields (a template that fails is a dead letter,
 * as it would be), then answers delivered without calling the receiver.
 */
function simulated(a: Adapter, config: Config): Adapter {
  const render = fieldsOf(config, a.name);
  return {
    name: a.name,
    type: a.type,
    accepts: (e) => a.accepts(e),
    async deliver(job) {
      try {
        render?.(job.entry);
      } catch (err) {
        if (err instanceof HttpFailure) return err.result;
        throw err;
      }
      return { ok: true, detail: 'simulated' };
    },
  };
}
