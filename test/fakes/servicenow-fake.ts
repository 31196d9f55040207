import { randomUUID } from 'node:crypto';
import { startFake, type FakeServer } from './http-fake.js';

export interface SnowRecord {
  sys_id: string;
  number: string;
  correlation_id?: string;
  state: string;
  [field: string]: unknown;
}

/** The stock incident table's columns the fake knows (a write of any other is ignored, a query on one matches nothing). */
const INCIDENT_COLUMNS = new Set([
  'sys_id',
  'number',
  'short_description',
  'description',
  'impact',
  'urgency',
  'priority',
  'state',
  'active',
  'correlation_id',
  'correlation_display',
  'close_code',
  'close_notes',
  'work_notes',
  'comments',
  'assignment_group',
  'assigned_to',
  'cmdb_ci',
  'category',
  'subcategory',
  'caller_id',
  'opened_at',
  'resolved_at',
  'closed_at',
  'sys_created_on',
  'sys_updated_on',
]);
/** The stock incident table's Closed state: its write ACL refuses any change to a Closed record. */
const CLOSED = '7';

/**
 * A stand-in for the ServiceNow Table API (/api/now/table/{table}): records in
 * memory; GET with an encoded sysparm_query (`correlation_id=X^ORDERBYnumber`, and
 * `^OR`, `^NQ`, `!=`, `ISNOTEMPTY` as ServiceNow reads them),
 * POST creates (201), PATCH /{sys_id} updates; every call needs the configured
 * basic auth. Like ServiceNow, nothing stops two records sharing a correlation_id.
 *
 * It refuses what ServiceNow refuses, in its answer shape
 * (`{"error": {"message", "detail"}, "status": "failure"}`):
 * - a table the instance does not have: 400 "Invalid table <name>" (Table API);
 * - a change to a Closed (state 7) incident: 403 "Operation Failed", as the
 *   stock incident write ACL answers an integration user;
 * and, as ServiceNow does, it ignores a write to a column the table does not
 * have, and a query on one matches no rows (`glide.invalid_query.returns_no_rows`,
 * true on current instances).
 */
export async function startServicenowFake(user = 'onceonly', password = 'secret'): Promise<FakeServer & { records: Map<string, SnowRecord> }> {
  /** correlation_id → sys_ids, kept with every write, so a lookup by key does not scan every record. */
  const byCorrelation = new Map<string, Set<string>>();
  const index = (rec: SnowRecord, before?: string) => {
    if (before !== undefined) byCorrelation.get(before.toLowerCase())?.delete(rec.sys_id);
    const c = String(rec.correlation_id ?? '').toLowerCase();
    let set = byCorrelation.get(c);
    if (!set) byCorrelation.set(c, (set = new Set()));
    set.add(rec.sys_id);
  };
  // Tests may plant records with records.set: they are indexed too.
  const records = new (class extends Map<string, SnowRecord> {
    override set(id: string, rec: SnowRecord) {
      const old = super.get(id);
      if (old) byCorrelation.get(String(old.correlation_id ?? '').toLowerCase())?.delete(id);
      super.set(id, rec);
      index(rec);
      return this;
    }
  })();
  const auth = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  let seq = 0;
  const fake = await startFake((r) => {
    if (r.headers.authorization !== auth) return { status: 401, body: { error: { message: 'User Not Authenticated' }, status: 'failure' } };
    const m = /^\/api\/now\/table\/([a-z0-9_]+)(?:\/([0-9a-f-]+))?$/.exec(r.path);
    if (!m) return { status: 400, body: { error: { message: 'Requested URI does not represent any resource', detail: null }, status: 'failure' } };
    if (m[1] !== 'incident') return { status: 400, body: { error: { message: `Invalid table ${m[1]}`, detail: null }, status: 'failure' } };
    const id = m[2];
    /** The columns of a write the table has; ServiceNow drops the rest without a word. */
    const known = (body: unknown) => Object.fromEntries(Object.entries((body ?? {}) as Record<string, unknown>).filter(([k]) => INCIDENT_COLUMNS.has(k)));
    if (r.method === 'GET' && !id) {
      // An encoded query as ServiceNow reads it: `^NQ` separates whole queries (their union); in
      // one, `^` joins terms with AND and `^OR` with OR; `ORDERBYfield` sorts; a term is
      // `field=value`, `field!=value` or `fieldISNOTEMPTY`, case-insensitively. Operators in the data steer it, as there.
      const text = r.query.get('sysparm_query') ?? '';
      const order = /\^?ORDERBY(\w+)/.exec(text)?.[1];
      type Term = { field: string; op: string; value: string } | null;
      const parse = (term: string): Term => {
        const t = /^(\w+?)(!=|=|ISNOTEMPTY)(.*)$/s.exec(term);
        return t ? { field: t[1]!, op: t[2]!, value: t[3]! } : null;
      };
      // As on ServiceNow, `=` and `!=` on a string field ignore case.
      const matches = (x: SnowRecord, t: Term) => {
        if (!t || !INCIDENT_COLUMNS.has(t.field)) return false;
        const v = String(x[t.field] ?? '').toLowerCase();
        const want = t.value.toLowerCase();
        return t.op === '=' ? v === want : t.op === '!=' ? v !== want : v !== '';
      };
      const queries = text.split('^NQ').map((q) => {
        const groups: Term[][] = [];
        for (const t of q.split('^')) {
          if (!t || t.startsWith('ORDERBY')) continue;
          if (t.startsWith('OR') && groups.length > 0) groups.at(-1)!.push(parse(t.slice(2)));
          else groups.push([parse(t)]);
        }
        return groups;
      });
      // Only records a query could match are tested: when one of its AND groups is nothing but
      // correlation_id equalities, its candidates come from the index (the same answer as a scan).
      const candidates = (groups: Term[][]): Iterable<SnowRecord> => {
        const anchor = groups.find((any) => any.every((t) => t?.field === 'correlation_id' && t.op === '='));
        if (!anchor) return records.values();
        return anchor.flatMap((t) => [...(byCorrelation.get(t!.value.toLowerCase()) ?? [])]).map((sysId) => records.get(sysId)!);
      };
      const hits = [...new Set(queries.flatMap((groups) => [...candidates(groups)].filter((x) => groups.every((any) => any.some((t) => matches(x, t))))))];
      if (order) hits.sort((a, b) => String(a[order] ?? '').localeCompare(String(b[order] ?? '')));
      const limit = Number(r.query.get('sysparm_limit') ?? 10000);
      return { status: 200, body: { result: hits.slice(0, limit) } };
    }
    if (r.method === 'POST' && !id) {
      const rec: SnowRecord = { state: '1', ...known(r.body), sys_id: randomUUID().replace(/-/g, ''), number: `INC${String(++seq).padStart(7, '0')}` };
      records.set(rec.sys_id, rec);
      return { status: 201, body: { result: rec } };
    }
    if (r.method === 'PATCH' && id) {
      const rec = records.get(id);
      if (!rec) return { status: 404, body: { error: { message: 'No Record found' }, status: 'failure' } };
      if (rec.state === CLOSED)
        return {
          status: 403,
          body: { error: { message: 'Operation Failed', detail: 'ACL Exception Update Failed due to security constraints' }, status: 'failure' },
        };
      const { work_notes, ...fields } = known(r.body);
      const before = String(rec.correlation_id ?? '');
      Object.assign(rec, fields);
      index(rec, before);
      if (work_notes) rec.work_notes_count = Number(rec.work_notes_count ?? 0) + 1;
      return { status: 200, body: { result: rec } };
    }
    return { status: 405, body: { error: { message: 'Method not allowed' } } };
  });
  return Object.assign(fake, { records });
}

/** The records that are tickets: not canceled as a duplicate of another (state 8, close_code Duplicate). */
export const openTickets = (records: Map<string, SnowRecord>) => [...records.values()].filter((r) => !(r.state === '8' && r.close_code === 'Duplicate'));
