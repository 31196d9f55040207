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
  override name = 'SecretRefError';
}

function resolveString(s: string, path: string, env: NodeJS.ProcessEnv): string {
  return s.replace(REF, (whole, escaped: string | undefined, kind: 'env' | 'file', name: string) => {
    if (escaped) return whole.slice(1);
    if (kind === 'env') {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new SecretRefError(`${path}: \${env:${name}} is not a valid environment variable name`);
      const v = env[name];
      if (v === undefined) throw new SecretRefError(`${path}: environment variable ${name} (from \${env:${name}}) is not set`);
      return v;
    }
    if (name === '') throw new SecretRefError(`${path}: \${file:} needs a path`);
    try {
      return readFileSync(name, 'utf8').replace(/\r?\n$/, '');
    } catch (error) {
      throw new SecretRefError(`${path}: cannot read ${name} (from \${file:…}): ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`);
    }
  });
}

/** `raw` with every reference in its string values replaced; walks objects and arrays (config is shallow: recursion is fine). */
export function resolveSecretRefs(raw: unknown, env: NodeJS.ProcessEnv = process.env, path = ''): unknown {
  if (typeof raw === 'string') return raw.includes('${') ? resolveString(raw, path || '(top level)', env) : raw;
  if (Array.isArray(raw)) return raw.map((v, i) => resolveSecretRefs(v, env, path ? `${path}.${i}` : String(i)));
  if (raw !== null && typeof raw === 'object')
    return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, resolveSecretRefs(v, env, path ? `${path}.${k}` : k)]));
  return raw;
}
