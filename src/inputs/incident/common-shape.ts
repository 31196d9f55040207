import { SEVERITIES } from '../../core/fingerprint.js';
import { MAX_SUMMARY, textProblem } from '../limits.js';
import { type Incident, MAX_IDENTITY } from './schema.js';

const SEVERITY = new Set<string>(SEVERITIES);
/** The fields of the common shape: identity, severity, and optionally cleared and summary. */
const COMMON = new Set(['element_id', 'fault_class', 'root_cause_id', 'severity', 'cleared', 'summary']);

const identity = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= MAX_IDENTITY && textProblem(v) === null;

/**
 * The incident a body of the common shape is (the three identity fields, a
 * severity, and at most `cleared` and `summary`, each valid), built as the
 * schema would build it; null for anything else, which the schema then
 * checks and, if it must, refuses with its issues. Checking by hand what
 * nearly every producer sends cost a third of what zod's walk does, and an
 * error answer is still zod's, word for word. A body this takes is one the
 * schema takes, with the same result: a test holds the two to that.
 */
export function commonIncident(body: unknown): Incident | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || Object.getPrototypeOf(body) !== Object.prototype) return null;
  const b = body as Record<string, unknown>;
  let fields = 0;
  for (const k in b) {
    if (!Object.hasOwn(b, k) || !COMMON.has(k)) return null;
    fields++;
  }
  const { element_id, fault_class, root_cause_id, severity, cleared, summary } = b;
  if (!identity(element_id) || !identity(fault_class) || !identity(root_cause_id)) return null;
  if (typeof severity !== 'string' || !SEVERITY.has(severity)) return null;
  if (cleared !== undefined && typeof cleared !== 'boolean') return null;
  if (summary !== undefined && (typeof summary !== 'string' || summary.length > MAX_SUMMARY || textProblem(summary, true) !== null)) return null;
  // A field present as undefined is not JSON; leave that to the schema.
  if (fields !== 4 + (cleared !== undefined ? 1 : 0) + (summary !== undefined ? 1 : 0)) return null;
  const incident: Incident = { element_id, fault_class, root_cause_id, severity: severity as Incident['severity'], cleared: cleared ?? false };
  if (summary !== undefined) incident.summary = summary;
  return incident;
}
