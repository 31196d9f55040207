import { startFake, type FakeServer } from './http-fake.js';

export interface JiraIssue {
  key: string;
  fields: { summary: string; description: string; labels: string[]; project: { key: string }; status: { name: string; statusCategory: { key: string } } };
  comments: string[];
}

const TRANSITIONS = [
  { id: '31', name: 'Done', to: { name: 'Done', statusCategory: { key: 'done' } } },
  { id: '41', name: 'Reopen', to: { name: 'To Do', statusCategory: { key: 'new' } } },
];

/**
 * A stand-in for Jira REST v2: issues in memory; GET /search with JQL as
 * Jira reads the part of it an adapter could be steered into (see evaluateJql), POST /issue, POST /issue/{key}/comment, GET and POST
 * /issue/{key}/transitions (Done, Reopen); basic auth required.
 */
export async function startJiraFake(
  user = 'bot@example.com',
  token = 'api-token',
): Promise<FakeServer & { issues: Map<string, JiraIssue>; searches: string[] }> {
  const issues = new Map<string, JiraIssue>();
  /** Every JQL query received, as sent. */
  const searches: string[] = [];
  const auth = `Basic ${Buffer.from(`${user}:${token}`).toString('base64')}`;
  let seq = 0;
  const fake = await startFake((r) => {
    if (r.headers.authorization !== auth) return { status: 401, body: { errorMessages: ['Unauthorized'] } };
    if (r.method === 'GET' && r.path === '/rest/api/2/search') {
      const jql = r.query.get('jql') ?? '';
      searches.push(jql);
      const matches = evaluateJql(jql);
      if (!matches) return { status: 400, body: { errorMessages: [`Error in the JQL Query: ${jql}`] } };
      // ORDER BY key ASC|DESC (by issue number, as Jira sorts keys of one project); newest first otherwise.
      const order = /ORDER BY key\s+(ASC|DESC)\s*$/i.exec(jql)?.[1]?.toUpperCase() ?? 'DESC';
      const num = (i: JiraIssue) => Number(i.key.split('-')[1]);
      const hits = [...issues.values()].filter(matches).sort((a, b) => (order === 'ASC' ? num(a) - num(b) : num(b) - num(a)));
      return {
        status: 200,
        body: {
          total: hits.length,
          issues: hits.slice(0, Number(r.query.get('maxResults') ?? 50)).map((i) => ({ key: i.key, fields: { status: i.fields.status } })),
        },
      };
    }
    if (r.method === 'POST' && r.path === '/rest/api/2/issue') {
      const f = (r.body as { fields: JiraIssue['fields'] }).fields;
      if (!f?.project?.key || !f.summary) return { status: 400, body: { errorMessages: [], errors: { summary: 'required' } } };
      const key = `${f.project.key}-${++seq}`;
      issues.set(key, { key, fields: { ...f, status: { name: 'To Do', statusCategory: { key: 'new' } } }, comments: [] });
      return { status: 201, body: { id: String(seq), key, self: `${fake.url}/rest/api/2/issue/${seq}` } };
    }
    const m = /^\/rest\/api\/2\/issue\/([A-Z]+-\d+)\/(comment|transitions)$/.exec(r.path);
    const issue = m ? issues.get(m[1]!) : undefined;
    if (!m || !issue) return { status: 404, body: { errorMessages: ['Issue does not exist'] } };
    if (m[2] === 'comment' && r.method === 'POST') {
      issue.comments.push((r.body as { body: string }).body);
      return { status: 201, body: { id: String(issue.comments.length) } };
    }
    if (m[2] === 'transitions' && r.method === 'GET') return { status: 200, body: { transitions: TRANSITIONS.map(({ id, name }) => ({ id, name })) } };
    if (m[2] === 'transitions' && r.method === 'POST') {
      const t = TRANSITIONS.find((x) => x.id === (r.body as { transition: { id: string } }).transition?.id);
      if (!t) return { status: 400, body: { errorMessages: ['no such transition'] } };
      issue.fields.status = t.to;
      return { status: 204 };
    }
    return { status: 405, body: { errorMessages: ['method not allowed'] } };
  });
  return Object.assign(fake, { issues, searches });
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
