import { joinIdentity, sha1Hex } from './identity.js';
import type { Severity } from './fingerprint.js';

/**
 * SPC violations. The key is windowed: one violation of one rule on
 * one process within one window of `window_seconds` is one alarm, however
 * often the control chart re-fires it.
 */
export interface ViolationIdentity {
  process_id: string;
  rule_id: string;
  /** epoch seconds of the violating sample */
  timestamp: number;
}

export function windowIndex(timestamp: number, windowSeconds: number): number {
  return Math.floor(timestamp / windowSeconds);
}

/** Lowercase hex SHA-1 over `process_id|rule_id|window`, text fields escaped as for incidents. */
export function violationKey(v: ViolationIdentity, windowSeconds: number): string {
  return sha1Hex(`${joinIdentity([v.process_id, v.rule_id])}|${windowIndex(v.timestamp, windowSeconds)}`);
}

export interface Classification {
  alarm_code: string;
  severity: Severity;
}

/** What the decision table says to do with a new alarm (the out-of-control action plan). */
export type ViolationAction = 'route_and_notify' | 'route' | 'log';

export function actionOf(route: boolean, notify: boolean): ViolationAction {
  return route ? (notify ? 'route_and_notify' : 'route') : 'log';
}
