import { ERROR_CODES } from '../errors.js';

type Json = Record<string, unknown>;
type Op = {
  summary: string;
  description?: string;
  security?: unknown[];
  parameters?: Json[];
  requestBody?: { content: Record<string, { schema: Json }> };
  responses: Record<string, { description: string }>;
};

/** One JSON Schema as a short rule: type, lengths, ranges, enums. */
function rule(s: Json): string {
  const parts: string[] = [];
  if (Array.isArray(s.enum)) parts.push(`one of ${(s.enum as unknown[]).map((v) => `\`${String(v)}\``).join(', ')}`);
  else if (s.const !== undefined) parts.push(`\`${String(s.const)}\``);
  else if (s.type) parts.push([s.type].flat().join(' or '));
  else parts.push('any JSON');
  if (s.minLength !== undefined || s.maxLength !== undefined) parts.push(`${s.minLength ?? 0}..${s.maxLength ?? '∞'} characters`);
  if (s.minimum !== undefined && s.maximum !== undefined && (s.maximum as number) < 2 ** 50) parts.push(`${s.minimum}..${s.maximum}`);
  else if (s.minimum !== undefined) parts.push(`≥ ${s.minimum}`);
  if (s.format) parts.push(String(s.format));
  if (typeof s.pattern === 'string' && s.pattern.startsWith('^\\d{4}')) parts.push('RFC 3339 time');
  if (s.default !== undefined) parts.push(`default ${JSON.stringify(s.default)}`);
  if (typeof s.description === 'string') parts.push(s.description);
  return parts.join(', ');
}

function fields(schema: Json, prefix = ''): string[] {
  const props = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required ?? []) as string[]);
  const rows: string[] = [];
  for (const [name, s] of Object.entries(props)) {
    rows.push(`| \`${prefix}${name}\` | ${rule(s).replaceAll('|', '\\|')} | ${required.has(name) ? 'yes' : 'no'} |`);
    if (s.type === 'object' && s.properties) rows.push(...fields(s, `${prefix}${name}.`));
    const items = s.items as Json | undefined;
    if (s.type === 'array' && items?.properties) rows.push(...fields(items, `${prefix}${name}[].`));
  }
  return rows;
}

/** docs/api.md: the OpenAPI document written for a person. Generated; `npm run api:doc` rewrites it. */
export function apiMarkdown(doc: Json): string {
  const paths = doc.paths as Record<string, Record<string, Op>>;
  const out: string[] = [
    '# HTTP API',
    '',
    '<!-- generated from the routes by `npm run api:doc` (the same document the server serves at /openapi.json); do not edit -->',
    '',
    `The whole API, route by route. The machine-readable form is \`GET /openapi.json\` (OpenAPI 3.1).`,
    '',
    '## Access',
    '',
    "With tenants configured, every route marked **tenant** needs `Authorization: Bearer <token>`; the token names the tenant that every read and write is limited to (another tenant's key answers 404). `/v2/enqueue` may carry the token as `routing_key` instead. Routes marked **open** never need one. Without tenants there is no authentication, and the server refuses to bind anything but a loopback address.",
    '',
    '## Limits',
    '',
    '- Request bodies over `limits.body_bytes` (512 KiB by default) answer 413; a body that is not JSON answers 415.',
    '- Bodies are strict: an unknown field is refused, naming it.',
    '- Each tenant has a rate limit (`tenants[].rate_limit`); over it, 429 with `Retry-After`.',
    '- `limit` query parameters are bounded as each route says.',
    '',
    '## Errors',
    '',
    'Every 4xx and 5xx is `{"error": {"code", "message", "issues"}}` (`issues` on validation errors: `[{"path", "message"}]`, the first 100 and then one saying how many more), except `/v2/enqueue`, which answers as PagerDuty does. A refused request changes nothing.',
    '',
    '| code | status |',
    '| --- | --- |',
    ...Object.entries(ERROR_CODES).map(([code, status]) => `| \`${code}\` | ${status} |`),
    '',
  ];
  const byTag = new Map<string, string[]>();
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const lines = [`### \`${method.toUpperCase()} ${path}\``, '', `${op.summary}. Access: **${op.security?.length === 0 ? 'open' : 'tenant'}**.`, ''];
      if (op.description) lines.push(op.description, '');
      const params = op.parameters ?? [];
      if (params.length > 0) {
        lines.push('| parameter | in | rule | required |', '| --- | --- | --- | --- |');
        for (const p of params)
          lines.push(
            `| \`${String(p.name)}\` | ${String(p.in)} | ${p.description ? `${String(p.description)}: ` : ''}${rule(p.schema as Json)} | ${p.required ? 'yes' : 'no'} |`,
          );
        lines.push('');
      }
      const body = op.requestBody?.content['application/json']?.schema;
      if (body) {
        const rows = fields(body);
        if (rows.length > 0) lines.push('| body field | rule | required |', '| --- | --- | --- |', ...rows, '');
        if (body.additionalProperties === false) lines.push('Unknown fields are refused.', '');
      }
      lines.push('| status | meaning |', '| --- | --- |', ...Object.entries(op.responses).map(([s, r]) => `| ${s} | ${r.description} |`), '');
      const tag = ((op as { tags?: string[] }).tags ?? ['other'])[0]!;
      byTag.set(tag, [...(byTag.get(tag) ?? []), ...lines]);
    }
  }
  for (const [tag, lines] of byTag) out.push(`## ${tag[0]!.toUpperCase()}${tag.slice(1)}`, '', ...lines);
  return `${out.join('\n').trimEnd()}\n`;
}
