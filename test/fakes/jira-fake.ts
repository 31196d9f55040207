import { startFake, type FakeServer } from './http-fake.js';

export interface JiraIssue {
  key: string;
  fields: {
    summary: string;
    description: string;
    labels: string[];
    project: { key: string };
    issuetype: { name?: string; id?: string };
    status: { name: string; statusCategory: { key: string } };
  };
  comments: string[];
  /** entity properties (Jira's issue properties), by property key */
  properties?: Record<string, unknown>;
}

type Status = JiraIssue['fields']['status'];
const TODO: Status = { name: 'To Do', statusCategory: { key: 'new' } };
const DOING: Status = { name: 'In Progress', statusCategory: { key: 'indeterminate' } };
const DONE: Status = { name: 'Done', statusCategory: { key: 'done' } };

/** The fields on the fake projects' create screen: Jira refuses a create that sets any other. */
const CREATE_SCREEN = new Set(['project', 'issuetype', 'summary', 'description', 'labels', 'priority', 'components']);
/** Jira's limit for a text field or a comment. */
const TEXT_MAX = 32_767;
const TOO_LONG = 'The entered text is too long. It exceeds the allowed limit of 32,767 characters.';

/** The issue types of the fake's projects (Jira's defaults for a software project). */
const ISSUE_TYPES = new Set(['Task', 'Bug', 'Story', 'Epic', 'Incident']);

/** Jira's default software workflow: which transitions each status offers, and where they lead. */
const WORKFLOW: Record<string, Array<{ id: string; name: string; to: Status }>> = {
  'To Do': [
    { id: '11', name: 'Start Progress', to: DOING },
    { id: '31', name: 'Done', to: DONE },
  ],
  'In Progress': [
    { id: '21', name: 'Stop Progress', to: TODO },
    { id: '31', name: 'Done', to: DONE },
  ],
  Done: [{ id: '41', name: 'Reopen', to: TODO }],
};

export interface JiraFakeOptions {
  user?: string;
  token?: string;
  /** `cloud` searches at /rest/api/3/search/jql and answers 410 at /rest/api/2/search; `datacenter` the other way round */
  deployment?: 'cloud' | 'datacenter';
  /** How long (real ms) a change takes to reach the search index; reading an issue by key is always current. */
  searchLagMs?: number;
}

/**
 * A stand-in for Jira REST: issues in memory. Search (GET /rest/api/2/search
 * on Data Center, /rest/api/3/search/jql on Cloud) reads JQL as Jira reads
 * the part of it an adapter could be steered into (see evaluateJql), and sees
 * an index that lags behind writes by `searchLagMs`, as Jira's does. GET
 * /issue/{key} reads the issue as it is now; POST /issue, POST
 * /issue/{key}/comment, GET and POST /issue/{key}/transitions follow the
 * default workflow (To Do, In Progress, Done), refusing a transition the
 * issue's status does not offer. A create without a project, a known issue
 * type or a summary, with a summary of several lines or over 255
 * characters, with a text over 32,767 characters, or setting a field the
 * create screen does not have, is refused as Jira refuses it, each field
 * named in `errors`; so is a comment over 32,767 characters. Basic auth
 * required.
 */
export async function startJiraFake(
  o: JiraFakeOptions = {},
): Promise<FakeServer & { issues: Map<string, JiraIssue>; searches: string[]; deployment: 'cloud' | 'datacenter'; catchUp(): void; put(i: JiraIssue): void }> {
  const { user = 'bot@example.com', token = 'api-token', deployment = 'datacenter', searchLagMs = 1500 } = o;
  const issues = new Map<string, JiraIssue>();
  /** What search sees: per issue, its snapshots with the time each becomes visible. */
  const index = new Map<string, Array<{ visibleAt: number; snapshot: JiraIssue }>>();
  const reindex = (i: JiraIssue) => {
    const list = index.get(i.key) ?? [];
    list.push({ visibleAt: Date.now() + searchLagMs, snapshot: structuredClone(i) });
    index.set(i.key, list);
  };
  const indexed = (key: string): JiraIssue | undefined => {
    const now = Date.now();
    return index
      .get(key)
      ?.filter((v) => v.visibleAt <= now)
      .at(-1)?.snapshot;
  };
  /** Every JQL query received, as sent. */
  const searches: string[] = [];
  const auth = `Basic ${Buffer.from(`${user}:${token}`).toString('base64')}`;
  const searchPath = deployment === 'cloud' ? '/rest/api/3/search/jql' : '/rest/api/2/search';
  let seq = 0;
  const fake = await startFake((r) => {
    if (r.headers.authorization !== auth) return { status: 401, body: { errorMessages: ['Unauthorized'] } };
    if (r.method === 'GET' && deployment === 'cloud' && r.path === '/rest/api/2/search') {
      return { status: 410, body: { errorMessages: ['The requested API has been removed. Please migrate to the /rest/api/3/search/jql API.'] } };
    }
    if (r.method === 'GET' && r.path === searchPath) {
      const jql = r.query.get('jql') ?? '';
      searches.push(jql);
      const matches = evaluateJql(jql);
      if (!matches) return { status: 400, body: { errorMessages: [`Error in the JQL Query: ${jql}`] } };
      // ORDER BY key ASC|DESC (by issue number, as Jira sorts keys of one project); newest first otherwise.
      const order = /ORDER BY key\s+(ASC|DESC)\s*$/i.exec(jql)?.[1]?.toUpperCase() ?? 'DESC';
      const num = (i: JiraIssue) => Number(i.key.split('-')[1]);
      const hits = [...issues.keys()]
        .map(indexed)
        .filter((i): i is JiraIssue => i !== undefined && matches(i))
        .sort((a, b) => (order === 'ASC' ? num(a) - num(b) : num(b) - num(a)));
      // `properties`: the issue properties asked for, by key, as Jira returns them beside the fields.
      const asked = (r.query.get('properties') ?? '').split(',').filter((k) => k !== '');
      const props = (i: JiraIssue) =>
        asked.length === 0 ? {} : { properties: Object.fromEntries(asked.filter((k) => i.properties?.[k] !== undefined).map((k) => [k, i.properties![k]])) };
      const page = hits.slice(0, Number(r.query.get('maxResults') ?? 50)).map((i) => ({ key: i.key, fields: { status: i.fields.status }, ...props(i) }));
      // Cloud pages by token and has no total; Data Center pages by offset.
      return { status: 200, body: deployment === 'cloud' ? { issues: page, isLast: page.length === hits.length } : { total: hits.length, issues: page } };
    }
    if (r.method === 'POST' && r.path === '/rest/api/2/issue') {
      // Jira's create refuses an issue without its required system fields (project, issue type, summary), each named
      // in `errors` under its field id, as Jira REST v2 "Create issue" answers 400.
      const f = (r.body as { fields?: Partial<JiraIssue['fields']> } | null)?.fields;
      const given = (r.body as { properties?: unknown } | null)?.properties;
      const errors: Record<string, string> = {};
      // Jira takes issue properties with the create as a list of {key, value}; a key is at most 255 characters.
      if (
        given !== undefined &&
        (!Array.isArray(given) || given.some((p) => typeof p?.key !== 'string' || p.key === '' || p.key.length > 255 || p.value === undefined))
      )
        errors.properties = 'The property key must be a non-empty string of at most 255 characters, with a value.';
      if (!f?.project?.key) errors.project = 'Specify a valid project ID or key';
      if (!f?.issuetype?.name && !f?.issuetype?.id) errors.issuetype = 'Specify an issue type';
      else if (f.issuetype.name !== undefined && !ISSUE_TYPES.has(f.issuetype.name)) errors.issuetype = 'Specify a valid issue type';
      if (!f?.summary) errors.summary = 'You must specify a summary of the issue.';
      else if (/[\r\n]/.test(f.summary)) errors.summary = 'The summary is invalid because it contains newline characters.';
      else if (f.summary.length > 255) errors.summary = 'Summary must be less than 255 characters.';
      for (const [field, value] of Object.entries(f ?? {})) {
        if (!CREATE_SCREEN.has(field)) errors[field] = `Field '${field}' cannot be set. It is not on the appropriate screen, or unknown.`;
        else if (typeof value === 'string' && value.length > TEXT_MAX) errors[field] = TOO_LONG;
      }
      if (Object.keys(errors).length > 0) return { status: 400, body: { errorMessages: [], errors } };
      const fields = f as JiraIssue['fields'];
      const key = `${fields.project.key}-${++seq}`;
      const properties = Object.fromEntries(((given as Array<{ key: string; value: unknown }> | undefined) ?? []).map((p) => [p.key, p.value]));
      const issue: JiraIssue = { key, fields: { ...fields, status: TODO }, comments: [], properties };
      issues.set(key, issue);
      reindex(issue);
      return { status: 201, body: { id: String(seq), key, self: `${fake.url}/rest/api/2/issue/${seq}` } };
    }
    const m = /^\/rest\/api\/2\/issue\/([A-Z]+-\d+)(?:\/(comment|transitions))?$/.exec(r.path);
    const issue = m ? issues.get(m[1]!) : undefined;
    if (!m || !issue) return { status: 404, body: { errorMessages: ['Issue does not exist or you do not have permission to see it.'] } };
    if (m[2] === undefined && r.method === 'GET') return { status: 200, body: { key: issue.key, fields: { status: issue.fields.status } } };
    if (m[2] === 'comment' && r.method === 'POST') {
      const body = (r.body as { body?: unknown } | null)?.body;
      if (typeof body !== 'string' || body === '') return { status: 400, body: { errorMessages: [], errors: { comment: 'Comment body can not be empty!' } } };
      if (body.length > TEXT_MAX) return { status: 400, body: { errorMessages: [], errors: { comment: TOO_LONG } } };
      issue.comments.push(body);
      return { status: 201, body: { id: String(issue.comments.length) } };
    }
    const offered = WORKFLOW[issue.fields.status.name] ?? [];
    if (m[2] === 'transitions' && r.method === 'GET') return { status: 200, body: { transitions: offered.map(({ id, name, to }) => ({ id, name, to })) } };
    if (m[2] === 'transitions' && r.method === 'POST') {
      const id = (r.body as { transition?: { id?: string } } | null)?.transition?.id;
      const t = offered.find((x) => x.id === id);
      if (!t) {
        return {
          status: 400,
          body: {
            errorMessages: [
              `It seems that you have tried to perform a workflow operation (${id}) that is not valid for the current state of this issue (${issue.key}).`,
            ],
            errors: {},
          },
        };
      }
      issue.fields.status = t.to;
      reindex(issue);
      return { status: 204 };
    }
    return { status: 405, body: { errorMessages: ['method not allowed'] } };
  });
  /** Adds an issue as another client made it (indexed after the lag, like any write). */
  const put = (i: JiraIssue) => {
    issues.set(i.key, i);
    reindex(i);
  };
  /** Makes the index current now (what a test waits for when it is not about lag). */
  const catchUp = () => {
    for (const list of index.values()) for (const v of list) v.visibleAt = Math.min(v.visibleAt, Date.now());
  };
  return Object.assign(fake, { issues, searches, deployment, catchUp, put });
}

/**
 * The slice of JQL that matters for injection, read as Jira reads it:
 * clauses `labels = "X"`, `labels != "X"`, `labels is EMPTY`, `labels is not
 * EMPTY` and `project = X`, joined by AND / OR (AND binding tighter), then an
 * optional ORDER BY. Quoted strings may hold escaped quotes. Anything else is
 * a syntax error (null), as Jira answers 400. A query an adapter built from a
 * key holding `" OR labels is not EMPTY OR labels = "` would therefore match
 * every issue here, as it would on Jira.
 */
export function evaluateJql(jql: string): ((i: JiraIssue) => boolean) | null {
  const body = jql.replace(/\s+ORDER BY\s+\w+(\s+(ASC|DESC))?\s*$/i, '');
  const tokens = body.match(/"(?:[^"\\]|\\.)*"|!=|=|\S+/g) ?? [];
  let i = 0;
  const unquote = (t: string) => (t.startsWith('"') ? t.slice(1, -1).replace(/\\(.)/g, '$1') : t);
  const clause = (): ((x: JiraIssue) => boolean) | null => {
    const field = tokens[i++]?.toLowerCase();
    const op = tokens[i++]?.toLowerCase();
    if (field === 'labels' && op === 'is') {
      const not = tokens[i]?.toLowerCase() === 'not';
      if (not) i++;
      if (tokens[i++]?.toUpperCase() !== 'EMPTY') return null;
      return (x) => x.fields.labels.length > 0 === not;
    }
    const value = tokens[i++];
    if (value === undefined) return null;
    if (field === 'labels' && op === '=') return (x) => x.fields.labels.includes(unquote(value));
    if (field === 'labels' && op === '!=') return (x) => !x.fields.labels.includes(unquote(value));
    if (field === 'project' && op === '=') return (x) => x.fields.project.key === unquote(value);
    return null;
  };
  const conjunction = () => {
    const parts = [clause()];
    while (tokens[i]?.toUpperCase() === 'AND') {
      i++;
      parts.push(clause());
    }
    return parts.includes(null) ? null : (x: JiraIssue) => parts.every((p) => p!(x));
  };
  const parts = [conjunction()];
  while (tokens[i]?.toUpperCase() === 'OR') {
    i++;
    parts.push(conjunction());
  }
  if (i !== tokens.length || parts.includes(null)) return null;
  return (x) => parts.some((p) => p!(x));
}
