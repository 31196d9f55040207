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
