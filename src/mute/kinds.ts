/**
 * The names of everything that can hold a delivery, in one place: the mutes
 * (what an operator or a rule said) and the holds (a key's own history). The
 * types, the OpenAPI enum, the metric's help and the dashboard all read them
 * here, so a new kind is named once.
 */
export const MUTE_KINDS = ['silence', 'maintenance', 'inhibition'] as const;
export const HOLD_KINDS = ['auto_pause', 'flapping', 'group_wait', 'group_interval'] as const;

export type MuteKind = (typeof MUTE_KINDS)[number];
export type HoldKind = (typeof HOLD_KINDS)[number];

/** Every kind, mutes first: as a metric's help or a doc lists them. */
export const HELD_BY = [...MUTE_KINDS, ...HOLD_KINDS] as const;
