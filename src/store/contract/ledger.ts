/** Ledger mode (retention: forever): which inputs' decisions go to an audit trail, and its rows. */

/** Which inputs are in ledger mode: their decisions go to the audit trail. */
export interface LedgerInputs {
  incidents: boolean;
  events: boolean;
  violations: boolean;
}

/** What a store that keeps an audit trail (Postgres) needs to write it. */
export interface Ledger {
  inputs: () => LedgerInputs;
  /** for the SUPPRESS reason (lost_race or unchanged), as the engine decides it */
  raceWindowMs: () => number;
  /** which replica decided */
  replica: string;
}

export interface AuditRow {
  at: number;
  kind: keyof LedgerInputs | 'silence';
  key: string;
  decision: string;
  reason: string;
  replica: string;
  requestId: string;
}

/** Who asked: the request an operation serves, written into its audit row. Passed down as an argument, never read from ambient state. */
export interface Origin {
  requestId?: string;
  /**
   * Asked once the claim is back, by a store that writes a SUPPRESS's reason
   * into its own trail: whether a claim that met a CREATE this old (ms)
   * raced it (`lost_race`) or was a plain repeat. The engine's answer
   * (engine/race-watch.ts), so the trail says what the answer said.
   */
  raced?: (claimAgeMs: number) => boolean;
}
