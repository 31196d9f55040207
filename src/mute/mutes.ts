import type { Labels } from '../core/matcher.js';
import type { MuteKind } from './kinds.js';

/** Why a key is muted: which control, and which of them (a silence id, a window's name, the inhibiting key). */
export interface Muted {
  by: MuteKind;
  id: string;
}

/** Something that may mute a tenant's key now; each control (silences, maintenance, inhibition) is one. */
export interface MuteSource {
  /** `key`: the key whose labels these are, when known (a key never inhibits itself). */
  mutedBy(tenant: string, labels: Labels, now: number, key?: string): Muted | null | Promise<Muted | null>;
  /**
   * False only when nothing of this source could mute a key of `tenant`
   * (no silence loaded, no window, no rule configured): a caller may then
   * skip building the key's labels and asking. Absent: it may mute.
   */
  mayMute?(tenant: string): boolean;
}

/** The controls together (silences, maintenance windows, inhibition): the first that mutes says why. */
export class Mutes implements MuteSource {
  constructor(private readonly sources: readonly MuteSource[]) {}

  mayMute(tenant: string): boolean {
    return this.sources.some((s) => s.mayMute?.(tenant) ?? true);
  }

  async mutedBy(tenant: string, labels: Labels, now: number, key?: string): Promise<Muted | null> {
    for (const s of this.sources) {
      const m = await s.mutedBy(tenant, labels, now, key);
      if (m) return m;
    }
    return null;
  }
}
