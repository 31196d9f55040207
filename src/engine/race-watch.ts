import { performance } from 'node:perf_hooks';

/** The store keeps a claim's time to the millisecond: a claim that young may be a moment older or younger. */
const RESOLUTION_MS = 1;

/**
 * Tells whether a claim that met a live key (SUPPRESS) raced the CREATE it
 * met, for the `lost_race` label. Two ways to know, neither comparing two
 * machines' clocks:
 *  - another copy of the same key was on its way in this process at the same
 *    time (they overlapped here);
 *  - on a store other replicas share (`shared`), the CREATE committed less
 *    than half this claim's own time in flight before this claim was decided
 *    (by the store's one clock, beyond its resolution): the first half of a
 *    flight is the way there, so it committed after this copy was sent, from
 *    another replica. Half, because the rest of the flight (the answer's way
 *    back, a commit) comes after the decision.
 * A repeat sent after the CREATE was answered meets neither, however soon.
 */
export class RaceWatch {
  private readonly keys = new Map<string, { inFlight: number; sends: number }>();

  constructor(private readonly shared: boolean) {}

  /**
   * Call when a claim is sent; call what it answers as soon as the claim is
   * back (answered or failed), which answers whether a claim of the given age
   * (store time) was raced.
   */
  depart(tenant: string, key: string): () => (claimAgeMs: number) => boolean {
    const id = `${tenant}\u0000${key}`;
    let e = this.keys.get(id);
    if (!e) this.keys.set(id, (e = { inFlight: 0, sends: 0 }));
    const alongside = e.inFlight > 0;
    const mySend = ++e.sends;
    e.inFlight++;
    // The flight's time matters only on a shared store: a store of this process alone reads no clock here.
    const sent = this.shared ? performance.now() : 0;
    const entry = e;
    return () => {
      const flight = this.shared ? performance.now() - sent : 0;
      // Another copy left after this one and before its answer: they overlapped too.
      const overlapped = alongside || entry.sends !== mySend;
      if (--entry.inFlight === 0) this.keys.delete(id);
      return (claimAgeMs) => overlapped || (this.shared && claimAgeMs < flight / 2 - RESOLUTION_MS);
    };
  }
}
