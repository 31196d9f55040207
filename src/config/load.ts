import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { configSchema, type Config } from './schema.js';
import { formatIssues } from '../core/validation.js';
import { maskSecrets, type ReadSecret, resolveSecretRefs, SecretRefError } from './secret-refs.js';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses and validates a config text; the error names the file and the field. */
export function parseConfig(text: string, source: string): Config {
  let raw: unknown;
  try {
    // YAML is a superset of JSON, so one parser reads both formats.
    raw = parseYaml(text, { prettyErrors: false });
  } catch (error) {
    // Where and what kind of error, never the text of the line: it may hold a token or a password.
    const e = error as { code?: string; pos?: [number, number] };
    const before = e.pos ? text.slice(0, e.pos[0]).split('\n') : null;
    const at = before ? ` at line ${before.length}, column ${before.at(-1)!.length + 1}` : '';
    throw new ConfigError(`${source}: not valid YAML or JSON${at}${e.code ? ` (${e.code})` : ''}`);
  }
  if (raw === null || raw === undefined) raw = {};
  const secrets: ReadSecret[] = [];
  try {
    raw = resolveSecretRefs(raw, process.env, '', secrets);
  } catch (error) {
    if (error instanceof SecretRefError) throw new ConfigError(`${source}: ${maskSecrets(error.message, secrets)}`);
    throw error;
  }
  const result = configSchema.safeParse(raw);
  if (!result.success) {
    const detail = formatIssues(result.error.issues)
      .map((i) => `${i.path || '(top level)'}: ${maskSecrets(i.message, secrets, i.path)}`)
      .join('; ');
    throw new ConfigError(`${source}: invalid config: ${detail}`);
  }
  return result.data;
}

export function loadConfigFile(path: string): Config {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`${path}: cannot read config file: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return parseConfig(text, path);
}
