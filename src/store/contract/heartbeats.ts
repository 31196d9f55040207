/**
 * The heartbeats facet: when each configured heartbeat (a dead-man's switch)
 * was last pinged, and whether its miss has been claimed. It lives in the
 * shared store so that every replica sees the same last ping (a restart
 * neither forgets a miss nor invents one) and one replica alone claims a miss.
 *
 * A heartbeat's *basis* is its last ping, or, for one never pinged, when a
 * replica first watched it: its deadline counts from there.
 *
 * Unlike the other facets, the times are the caller's (`now`, ms): the
 * monitor compares them with its own clock, so the record and the deadline
 * are on one clock on every backend (Redis's TIME would not be).
 */
export interface HeartbeatRecord {
  name: string;
  /** ms: when a replica first watched it */
  since: number;
  /** ms; null when never pinged */
  lastPingAt: number | null;
  /** the basis whose miss a replica claimed, until a ping's recovery clears it */
  missedBasis: number | null;
}

/** The time a heartbeat's deadline counts from. */
export const basisOf = (r: Pick<HeartbeatRecord, 'since' | 'lastPingAt'>) => r.lastPingAt ?? r.since;

export interface HeartbeatStore {
  /** Starts watching `name` now unless it is already watched (its record is kept as it is). */
  enroll(tenant: string, name: string, now: number): Promise<void>;
  /** Records a ping now (watching it from now if it was not), and answers the record as it stands after the ping. */
  ping(tenant: string, name: string, now: number): Promise<HeartbeatRecord>;
  /**
   * One atomic step: when the record's basis is still `basis` and no miss of
   * that basis is claimed, claims it and answers true. Two replicas noticing
   * one miss at once: one gets true. A ping in between moves the basis: false.
   */
  claimMiss(tenant: string, name: string, basis: number): Promise<boolean>;
  /** Clears the claimed miss while it is still the one of `basis` (the incident it opened is closed). */
  clearMiss(tenant: string, name: string, basis: number): Promise<void>;
  /** The tenant's records, by name. */
  list(tenant: string): Promise<HeartbeatRecord[]>;
}
