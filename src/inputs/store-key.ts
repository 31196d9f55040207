import { textProblem } from './limits.js';

/**
 * Every key GET /v1/incidents can list, as a caller gives it back in a path
 * (show, close): an incident's `dedup:` and 32 lowercase hex, an Alertmanager
 * alert's `am:<fingerprint>` (at most 128 characters), a PagerDuty event's
 * `pd:<dedup_key>` (at most 255) and an Opsgenie alert's `og:<alias>` (at
 * most 512), each as its input's limits allow.
 */
const STORE_KEY = /^(?:dedup:[0-9a-f]{32}|am:.{1,128}|pd:.{1,255}|og:.{1,512})$/su;

export const STORE_KEY_RULE =
  'must be a key as GET /v1/incidents lists it: "dedup:" and 32 lowercase hex, "am:" and an Alertmanager fingerprint, "pd:" and a PagerDuty dedup_key, or "og:" and an Opsgenie alias';

export const isStoreKey = (key: string): boolean => STORE_KEY.test(key) && textProblem(key) === null;

/** The namespace of Alertmanager alerts' keys: `am:` and the alert's fingerprint. */
export const ALERTMANAGER_KEY_PREFIX = 'am:';
export const isAlertmanagerKey = (key: string): boolean => key.startsWith(ALERTMANAGER_KEY_PREFIX);
