import { createHash, createHmac } from 'node:crypto';

// The identities docs/adapters.md gives, computed here from its words with node:crypto, never by the
// adapters' own code: a test that took them from src would agree with any mistake src made.

type Scope = { tenant: string; kind: string; key: string };
const sha256 = (e: Scope) => createHash('sha256').update(`${e.tenant}\u0000${e.kind}\u0000${e.key}`).digest('hex');

/** ServiceNow's correlation_id: `onceonly-` and 40 hex of SHA-256 over tenant NUL kind NUL key. */
export const servicenowCorrelation = (e: Scope) => `onceonly-${sha256(e).slice(0, 40)}`;

/** The Jira label: `onceonly-` and 24 hex of the same hash. */
export const jiraLabel = (e: Scope) => `onceonly-${sha256(e).slice(0, 24)}`;

/** `X-Onceonly-Signature`: `t=<unix seconds>,v1=<hex of HMAC-SHA256 over "<t>.<raw body>">`. */
export const webhookSignature = (secret: string, t: number, raw: string) => `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${raw}`).digest('hex')}`;
