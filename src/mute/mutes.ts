import type { Labels } from './matcher.js';

/** Why a key is muted: which control, and which of them (a silence id, a window's name, the inhibiting key). */
export interface Muted {
  by: 'silence' | 'maintenance' | 'inhibition';
  id: string;
}

/** Something that may mute a tenant's key now; each control (silences, maintenance, inhibition) is one. */
export interface MuteSource {
  mutedBy(tenant: string, labels: Labels, now: number): Muted | null;
}

/** The controls together (silences, maintenance windows): the first that mutes says why. */
export class Mutes implements MuteSource {
  constructor(private readonly sources: readonly MuteSource[]) {}

  mutedBy(tenant: string, labels: Labels, now: number): Muted | null {
    for (const s of this.sources) {
      const m = s.mutedBy(tenant, labels, now);
      if (m) return m;
    }
    return null;
  }
}
