import { readFileSync } from 'node:fs';

/**
 * Secrets need not be written into the config file: any string value may
 * hold `${env:NAME}` (an environment variable) or `${file:/path}` (a file's
 * contents, one trailing line break dropped, as Docker and Kubernetes mount
 * secrets), whole or inside a longer string (a URL with a token in its path).
 * `$${` is a literal `${`. They are resolved at every load, so a SIGHUP after
 * rotating a secret picks the new value up. An error names the field and the
 * variable or file, never a value.
 */
const REF = /\$(\$)?\{(env|file):([^}]*)\}/g;

export class SecretRefError extends Error {
  readonly code = 'secret_ref';
  override name = 'SecretRefError';
}

/** A value read from the environment or a file, and the field it went into. */
export interface ReadSecret {
  path: string;
  value: string;
}

function resolveString(s: string, path: string, env: NodeJS.ProcessEnv, found: ReadSecret[]): string {
  return s.replace(REF, (whole, escaped: string | undefined, kind: 'env' | 'file', name: string) => {
    if (escaped) return whole.slice(1);
    if (kind === 'env') {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new SecretRefError(`${path}: \${env:${name}} is not a valid environment variable name`);
      const v = env[name];
      if (v === undefined) throw new SecretRefError(`${path}: environment variable ${name} (from \${env:${name}}) is not set`);
      found.push({ path, value: v });
      return v;
    }
    if (name === '') throw new SecretRefError(`${path}: \${file:} needs a path`);
    try {
      const v = readFileSync(name, 'utf8').replace(/\r?\n$/, '');
      found.push({ path, value: v });
      return v;
    } catch (error) {
      throw new SecretRefError(`${path}: cannot read ${name} (from \${file:…}): ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`);
    }
  });
}

/**
 * `raw` with every reference in its string values replaced; walks objects
 * and arrays (config is shallow: recursion is fine). Each value read is
 * pushed to `found`, so an error about the config can mask it.
 */
export function resolveSecretRefs(
  raw: unknown,
  env: NodeJS.ProcessEnv = process.env,
  path = '',
  found: ReadSecret[] = [],
  /** Given, a reference that cannot be resolved is listed here (its field left as written) and the walk goes on; else it throws. */
  failed?: Array<{ path: string; message: string }>,
): unknown {
  if (typeof raw === 'string') {
    if (!raw.includes('${')) return raw;
    const at = path || '(top level)';
    try {
      return resolveString(raw, at, env, found);
    } catch (error) {
      if (!failed || !(error instanceof SecretRefError)) throw error;
      failed.push({ path: at, message: error.message });
      return raw;
    }
  }
  if (Array.isArray(raw)) return raw.map((v, i) => resolveSecretRefs(v, env, path ? `${path}.${i}` : String(i), found, failed));
  if (raw !== null && typeof raw === 'object')
    return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, resolveSecretRefs(v, env, path ? `${path}.${k}` : k, found, failed)]));
  return raw;
}

/**
 * A config error's text with every value read from the environment or a
 * file shown as `***`. A validation message may quote a field's value (a
 * matcher, a time zone, a tenant name), whole or in part: in a message about
 * a field that took such a value (`at`), whatever it quotes is masked too.
 */
export function maskSecrets(text: string, secrets: readonly ReadSecret[], at?: string): string {
  let out = text;
  const values = [...new Set(secrets.map((s) => s.value))].filter((x) => x.length >= 3).sort((a, b) => b.length - a.length);
  for (const v of values) {
    out = out.split(v).join('***');
    // A message may quote the value as JSON: its escaped form too.
    const quoted = JSON.stringify(v).slice(1, -1);
    if (quoted !== v) out = out.split(quoted).join('***');
  }
  const touched = at !== undefined && secrets.some((s) => s.path === at || s.path.startsWith(`${at}.`) || at.startsWith(`${s.path}.`));
  // A single quote is a quote only where it opens and closes a span, not inside a word
  // ("can't", "doesn't"): otherwise the message's own words would be masked between them.
  return touched ? out.replace(/"(?:[^"\\]|\\.)*"|`[^`]*`|(?<![\p{L}\p{N}])'[^'\n]*'(?![\p{L}\p{N}])/gu, '"***"') : out;
}
