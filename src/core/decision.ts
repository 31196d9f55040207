import { parseIncidentFingerprint } from './fingerprint.js';

export type Decision = 'CREATE' | 'SUPPRESS' | 'UPDATE';

/**
 * Every decision carries a reason; the pair is a metric label, so the set is
 * closed and small.
 *  - CREATE/new        no live record held the key
 *  - CREATE/expired    the key's previous incident expired without being closed, recently
 *                      (a premature expiry: the TTL is shorter than the gap between re-fires)
 *  - CREATE/provisional the store could not be reached; decided locally (fail-open)
 *  - SUPPRESS/unchanged an ordinary re-fire with the same fingerprint
 *  - SUPPRESS/lost_race the same fingerprint, from a copy that was already on its way
 *                      when the CREATE committed (it raced the claim and lost): the
 *                      claim is younger than this call's own time in flight (and than
 *                      the race window). A repeat sent after the CREATE was answered is
 *                      `unchanged`, however soon.
 *  - UPDATE/severity   the severity changed
 *  - UPDATE/cleared    the incident was marked cleared
 *  - UPDATE/reopened   a cleared incident fired again uncleared
 *  - UPDATE/amended    an edit of a named live episode at the same severity (what the
 *                      alert says changed: an Opsgenie message or description update)
 *  - SUPPRESS/stale    an alert whose episode was already resolved (an Alertmanager HA
 *                      peer's late `firing`): it must not reopen the closed incident
 */
export type DecisionReason = 'new' | 'expired' | 'provisional' | 'unchanged' | 'lost_race' | 'severity' | 'cleared' | 'reopened' | 'amended' | 'stale';

export const DECISION_REASONS: ReadonlyArray<readonly [Decision, DecisionReason]> = [
  ['CREATE', 'new'],
  ['CREATE', 'expired'],
  ['CREATE', 'provisional'],
  ['SUPPRESS', 'provisional'],
  ['UPDATE', 'provisional'],
  ['SUPPRESS', 'unchanged'],
  ['SUPPRESS', 'lost_race'],
  ['SUPPRESS', 'stale'],
  ['UPDATE', 'severity'],
  ['UPDATE', 'cleared'],
  ['UPDATE', 'reopened'],
  ['UPDATE', 'amended'],
];

/** What the store's one atomic step reports; the store knows nothing of reasons. */
export type ClaimOutcome =
  | { kind: 'created'; expired?: { updates: number } }
  | { kind: 'unchanged'; createdAt: number; now: number }
  | { kind: 'changed'; previousFingerprint: string; fingerprint: string }
  /** the claim's episode started no later than the key's recorded resolution: nothing changed */
  | { kind: 'stale' };

export interface DecisionWithReason {
  decision: Decision;
  reason: DecisionReason;
}

/**
 * `raced(claimAgeMs)`: whether this copy was already on its way when the
 * CREATE it met committed (see engine/race-watch.ts); without it, any SUPPRESS
 * inside the race window counts. The window caps it either way.
 */
export function decideFromOutcome(outcome: ClaimOutcome, raceWindowMs: number, raced: (claimAgeMs: number) => boolean = () => true): DecisionWithReason {
  switch (outcome.kind) {
    case 'created':
      return { decision: 'CREATE', reason: outcome.expired ? 'expired' : 'new' };
    case 'unchanged':
      return {
        decision: 'SUPPRESS',
        reason: outcome.now - outcome.createdAt <= raceWindowMs && raced(outcome.now - outcome.createdAt) ? 'lost_race' : 'unchanged',
      };
    case 'changed':
      return { decision: 'UPDATE', reason: updateReason(outcome.previousFingerprint, outcome.fingerprint) };
    case 'stale':
      return { decision: 'SUPPRESS', reason: 'stale' };
  }
}

function updateReason(previous: string, next: string): DecisionReason {
  if (previous === next) return 'amended';
  const before = parseIncidentFingerprint(previous);
  const after = parseIncidentFingerprint(next);
  if (!before.cleared && after.cleared) return 'cleared';
  if (before.cleared && !after.cleared) return 'reopened';
  return 'severity';
}
