import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { configSchema, type Config } from './schema.js';
import { formatIssues } from '../core/validation.js';
import { maskSecrets, type ReadSecret, resolveSecretRefs } from './secret-refs.js';

export class ConfigError extends Error {
  readonly code = 'config_invalid';
  override name = 'ConfigError';
  /** Each problem on its own, `field: what is wrong` (one, the message, when the file cannot be read or parsed). */
  readonly problems: string[];

  constructor(message: string, problems?: string[]) {
    super(message);
    this.problems = problems ?? [message];
  }
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
  const unresolved: Array<{ path: string; message: string }> = [];
  raw = resolveSecretRefs(raw, process.env, '', secrets, unresolved);
  const result = configSchema.safeParse(raw);
  if (unresolved.length === 0 && result.success) return result.data;
  // Every problem, not the first: a reference that cannot be resolved, then what the schema finds
  // elsewhere (a field whose reference failed holds the reference's text, which is not its fault).
  const refs = unresolved.map((u) => maskSecrets(u.message, secrets));
  const issues = result.success
    ? []
    : formatIssues(result.error.issues)
        .filter((i) => !unresolved.some((u) => i.path === u.path || i.path.startsWith(`${u.path}.`)))
        .map((i) => `${i.path || '(top level)'}: ${maskSecrets(i.message, secrets, i.path)}`);
  const problems = [...refs, ...issues];
  throw new ConfigError(refs.length > 0 ? `${source}: ${problems.join('; ')}` : `${source}: invalid config: ${problems.join('; ')}`, problems);
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
