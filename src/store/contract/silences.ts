import type { Matcher } from '../../core/matcher.js';
import type { Origin } from './ledger.js';

/**
 * The silences facet: Alertmanager-style silences, kept in the shared store
 * so that every replica mutes the same keys and a restart forgets none. Each
 * write is one atomic step that also bumps the store's silence version: a
 * replica watches that one number and reloads the silences only when it
 * moved, instead of reading every silence on every poll.
 */
export interface Silence {
  /** a UUID, made by the server */
  id: string;
  tenant: string;
  matchers: Matcher[];
  /** ms */
  startsAt: number;
  /** ms; expiring a silence sets it to the time it was expired */
  endsAt: number;
  createdBy: string;
  comment: string;
  /** ms, the last write */
  updatedAt: number;
}

export type SilenceState = 'pending' | 'active' | 'expired';

export const silenceState = (s: Pick<Silence, 'startsAt' | 'endsAt'>, now: number): SilenceState =>
  now >= s.endsAt ? 'expired' : now < s.startsAt ? 'pending' : 'active';

/** How long an expired silence is kept (shown as expired, as Alertmanager does), then swept. */
export const SILENCE_RETENTION_MS = 120 * 3_600_000;

/**
 * A tenant's bounds on what it stores (limits.silences_per_tenant and
 * limits.ended_silences_per_tenant): `open`, silences that have not ended,
 * so a broken script cannot fill the store; `ended`, ended ones kept (shown
 * as expired until SILENCE_RETENTION_MS), so a script that creates and
 * expires in a loop cannot fill it either.
 */
export interface SilenceLimits {
  open: number;
  ended: number;
}

/** Ended silences one create deletes at most: a lowered bound is reached over a few creates, each of bounded cost. */
export const SILENCE_TRIM_BATCH = 1000;

export type SilenceUpdate = 'updated' | 'absent' | 'expired';

/**
 * Writes take the request they serve (`origin`): Postgres keeps an audit row
 * of every silence write (kind `silence`, key the silence id, decision
 * CREATE, UPDATE or EXPIRE, reason who made it) in the write's own
 * transaction, in every mode, as people make silences and someone will ask
 * who muted what.
 */
export interface SilenceStore {
  /**
   * Stores a new silence unless its tenant already has `limits.open` silences that end after `now`; false when refused.
   * In the same step, the tenant's ended silences beyond `limits.ended` are deleted, oldest-ended first
   * (at most SILENCE_TRIM_BATCH of them).
   */
  create(s: Silence, limits: SilenceLimits, now: number, origin?: Origin): Promise<boolean>;
  /** Replaces a silence of the same tenant and id that has not ended by `now`; otherwise changes nothing and says why. */
  update(s: Silence, now: number, origin?: Origin): Promise<SilenceUpdate>;
  /** Ends a silence at `now` (one still pending ends before it starts); false when the tenant has no such silence. An ended one stays as it is. */
  expire(tenant: string, id: string, now: number, origin?: Origin): Promise<boolean>;
  get(tenant: string, id: string): Promise<Silence | null>;
  /**
   * A tenant's silences, or (null) every tenant's; with `endedAfter`, only
   * those that end after it (what a replica loads when the version moves:
   * the ended ones a tenant keeps mute nothing).
   */
  list(tenant: string | null, endedAfter?: number): Promise<Silence[]>;
  /** A number every write changes: a replica reloads when it differs from the one it loaded with. */
  version(): Promise<number>;
  /**
   * One consistent read: the version now, and every silence written (made,
   * updated or expired) after version `since` and still kept. A replica that
   * loaded at `since` applies these instead of reading every silence again;
   * one that misses a deletion loses nothing, since only ended silences are
   * deleted and they mute nothing.
   */
  changedSince(since: number): Promise<{ version: number; silences: Silence[] }>;
}
