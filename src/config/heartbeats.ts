import { z } from 'zod';
import { SEVERITIES } from '../core/fingerprint.js';

/** A heartbeat's name: what its ping URL and its incident's element_id carry. */
export const HEARTBEAT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
export const HEARTBEAT_NAME_RULE = '1..128 letters, digits, _ . : - (starting with a letter or digit)';

/**
 * Heartbeats (dead-man's switches): each expects a ping at least every
 * `interval_seconds`; when none came for `interval_seconds + grace_seconds`
 * one incident is opened, and the next ping closes it. `alertname`: an
 * Alertmanager alert of that name (Prometheus's always-firing Watchdog) counts
 * as a ping. `tenant` says whose it is once tenants are configured.
 */
/** Ten years: the longest interval or grace a heartbeat may have. */
export const MAX_HEARTBEAT_SECONDS = 10 * 365 * 86_400;

export const heartbeatsConfig = z
  .array(
    z.strictObject({
      name: z.string().regex(HEARTBEAT_NAME, `must be ${HEARTBEAT_NAME_RULE}`),
      tenant: z.string().min(1).max(128).optional(),
      // At most ten years each: a deadline past what a date can hold would fail every read of the heartbeat.
      interval_seconds: z.number().int().positive().max(MAX_HEARTBEAT_SECONDS),
      grace_seconds: z.number().int().nonnegative().max(MAX_HEARTBEAT_SECONDS).default(0),
      severity: z.enum(SEVERITIES, { message: `must be one of ${SEVERITIES.join(', ')}` }).default('MAJOR'),
      alertname: z.string().min(1).max(1024).optional(),
    }),
  )
  .max(1000)
  .default([]);

export type HeartbeatConfig = z.output<typeof heartbeatsConfig>[number];
