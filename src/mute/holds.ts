import type { Delivery } from '../store/contract/index.js';
import type { HoldKind } from './kinds.js';

/**
 * Holds are the noise controls that look at a key's own history rather than
 * at what an operator said: auto-pause (a create waits a while in case the
 * fault clears by itself) and flapping (a key that keeps closing and opening
 * again waits until it settles). They hold deliveries exactly as mutes do
 * (folded, neither sent nor a dead letter), and are asked at lease time.
 */
export interface Hold {
  by: HoldKind;
  /** which rule: `auto_pause[i]`, `flapping`, or the group's key */
  id: string;
  /** ms: when the hold ends if nothing changes (the delivery is looked at again then, or sooner) */
  until: number;
}

/** Hold the delivery; or send it with `mark` merged into its data (a flapping key's settled state); or nothing to say. */
export type HoldVerdict = { hold: Hold } | { mark: Record<string, unknown> } | null;

export interface HoldSource {
  verdict(d: Delivery, now: number): Promise<HoldVerdict>;
}

/** The holds together: the first that holds says why; marks add up. */
export class Holds implements HoldSource {
  constructor(private readonly sources: readonly HoldSource[]) {}

  async verdict(d: Delivery, now: number): Promise<HoldVerdict> {
    let mark: Record<string, unknown> | null = null;
    for (const s of this.sources) {
      const v = await s.verdict(d, now);
      if (v && 'hold' in v) return v;
      if (v) mark = { ...(mark ?? {}), ...v.mark };
    }
    return mark ? { mark } : null;
  }
}
