/**
 * A recorded history of requests and the checker that says whether it was
 * legal, in the manner of Jepsen's checkers: every
 * request is an operation with a start, an end and an outcome; one that got
 * no answer (the replica died, the connection broke) is indeterminate: it may
 * or may not have taken effect, and the checker allows both.
 *
 * Per key, with closes splitting the key's life into episodes:
 *   - at most one CREATE per episode (a provisional CREATE, made while the
 *     store was unreachable, is allowed beside it and counted as merged);
 *   - at least one CREATE per episode unless some operation of the episode is
 *     indeterminate (its CREATE may have been made and its answer lost);
 *   - an UPDATE only when the key's state just before it could have been
 *     another fingerprint, and a SUPPRESS only when it could have been the
 *     same one. The state just before an operation is the fingerprint of the
 *     last operation to take effect before it: any operation of the episode
 *     that could have come first, unless both it and another one that surely
 *     took effect (answered 2xx, decided by the shared store) did, the other
 *     wholly between them and the operation.
 *     So a SUPPRESS of MAJOR after an answered UPDATE to CRITICAL, or a second
 *     UPDATE to the fingerprint the first one set, is illegal;
 *   - after a close, the first decision is a CREATE (covered by the first two
 *     rules: a close starts a new episode).
 */

export type Decision = 'CREATE' | 'SUPPRESS' | 'UPDATE';

export interface Op {
  /** index in the history, for messages */
  id: number;
  kind: 'ingest' | 'close';
  key: string;
  /** material fingerprint (ingest) */
  fp?: string;
  replica: number;
  /** ms, from the test's clock */
  start: number;
  end: number;
  /** HTTP status; 0 when no answer came */
  status: number;
  decision?: Decision;
  provisional?: boolean;
  /** a device event's answer (applied, duplicate, rejected) */
  outcome?: string;
}

export class History {
  readonly ops: Op[] = [];
  private readonly t0 = performance.now();

  now() {
    return performance.now() - this.t0;
  }

  record(op: Omit<Op, 'id'>): Op {
    const o = { ...op, id: this.ops.length };
    this.ops.push(o);
    return o;
  }

  /** Answered with 2xx. */
  static ok(o: Op) {
    return o.status >= 200 && o.status < 300;
  }

  /** No answer, or an answer that does not say whether it took effect (5xx). */
  static indeterminate(o: Op) {
    return o.status === 0 || o.status >= 500;
  }
}

export interface Violation {
  key: string;
  rule: string;
  /** the key's operations, in start order, for the report */
  ops: Op[];
}

const couldPrecede = (a: Op, b: Op) => a !== b && a.start < b.end;

/** Took effect inside its own interval, for sure: answered 2xx and decided by the shared store (a provisional one lands when replayed). */
const surelyTookEffect = (o: Op) => o.kind === 'ingest' && History.ok(o) && o.provisional !== true;

/**
 * The fingerprints the key could hold just before `o`: those of the operations
 * that could have been the last to take effect before it. `sure` are the
 * episode's certain members (only they can surely stand between two others).
 */
function statesBefore(o: Op, all: readonly Op[], sure: readonly Op[]): Set<string | undefined> {
  const out = new Set<string | undefined>();
  for (const p of all) {
    if (!couldPrecede(p, o)) continue;
    // Only an operation known to have taken effect inside its interval can be known to be passed: one with no
    // answer, or a provisional one (replayed later), may have landed at any time after it started.
    const passed = surelyTookEffect(p) && sure.some((q) => q !== p && q !== o && surelyTookEffect(q) && p.end < q.start && q.end < o.start);
    if (!passed) out.add(p.fp);
  }
  return out;
}

/** Checks every key's operations; returns the violations (none for a legal history). */
export function checkHistory(ops: Op[]): Violation[] {
  const byKey = new Map<string, Op[]>();
  for (const o of ops) {
    let list = byKey.get(o.key);
    if (!list) byKey.set(o.key, (list = []));
    list.push(o);
  }
  const violations: Violation[] = [];
  for (const [key, list] of byKey) {
    list.sort((a, b) => a.start - b.start);
    const fail = (rule: string) => violations.push({ key, rule, ops: list });
    // Episodes: split at each close that was answered. An ingest belongs to the
    // episode of the closes that ended before it started; one that overlaps a
    // close could fall on either side: it is only a "maybe" member of both
    // episodes, which no rule counts against but every rule may lean on.
    const closes = list.filter((o) => o.kind === 'close' && History.ok(o));
    const episodes = new Map<number, { sure: Op[]; maybe: Op[] }>();
    const at = (e: number) => {
      let ep = episodes.get(e);
      if (!ep) episodes.set(e, (ep = { sure: [], maybe: [] }));
      return ep;
    };
    for (const o of list) {
      if (o.kind !== 'ingest') continue;
      const before = closes.filter((c) => c.end <= o.start).length;
      const overlapping = closes.filter((c) => c.start < o.end && o.start < c.end).length;
      if (overlapping === 0) at(before).sure.push(o);
      else for (let e = before; e <= before + overlapping; e++) at(e).maybe.push(o);
    }
    for (const [e, { sure, maybe }] of episodes) {
      const all = [...sure, ...maybe];
      const answered = sure.filter(History.ok);
      const creates = answered.filter((o) => o.decision === 'CREATE' && !o.provisional);
      if (creates.length > 1) fail(`episode ${e}: ${creates.length} CREATEs (ops ${creates.map((o) => o.id).join(', ')})`);
      const couldCreate = (o: Op) => History.indeterminate(o) || o.provisional === true || o.decision === 'CREATE';
      if (creates.length === 0 && answered.length > 0 && !all.some(couldCreate)) {
        fail(`episode ${e}: answered ${answered.length} times and never CREATE, with no indeterminate operation to have made it`);
      }
      for (const o of answered) {
        if (o.decision !== 'UPDATE' && o.decision !== 'SUPPRESS') continue;
        const states = [...statesBefore(o, all, sure)];
        if (o.decision === 'UPDATE' && !states.some((fp) => fp !== o.fp)) {
          fail(
            states.length === 0
              ? `episode ${e}: op ${o.id} UPDATE to ${o.fp}, but no operation could have come first`
              : `episode ${e}: op ${o.id} UPDATE to ${o.fp}, but the key could only hold ${o.fp} then (an UPDATE to what it holds is a SUPPRESS)`,
          );
        }
        if (o.decision === 'SUPPRESS' && !states.includes(o.fp)) {
          fail(
            states.length === 0
              ? `episode ${e}: op ${o.id} SUPPRESS of ${o.fp}, but no operation could have come first`
              : `episode ${e}: op ${o.id} SUPPRESS of ${o.fp}, but the key could only hold ${states.join(' or ')} then (a change is an UPDATE)`,
          );
        }
      }
    }
  }
  return violations;
}

/** A violation as text a person can replay from: the rule and the key's whole history. */
export function describe(v: Violation, max = 40): string {
  const lines = v.ops
    .slice(0, max)
    .map(
      (o) =>
        `  #${o.id} ${o.kind} replica ${o.replica} ${o.start.toFixed(1)}–${o.end.toFixed(1)} ms status ${o.status} ${o.decision ?? ''}${o.provisional ? ' (provisional)' : ''} ${o.fp ?? ''}`,
    );
  return [`${v.key}: ${v.rule}`, ...lines, ...(v.ops.length > max ? [`  … ${v.ops.length - max} more`] : [])].join('\n');
}
