import type { Command } from 'commander';
import { ConfigError, loadConfigFile } from '../config/load.js';
import type { Config } from '../config/schema.js';
// The adapters' config schemas: a config naming them parses.
import '../delivery/adapters/index.js';

const counted = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** A problem that is only an environment variable not set in this shell: `path: environment variable NAME … is not set`. */
const UNSET_ENV = /^(?:.*?: )?(\S+): environment variable ([A-Za-z_][A-Za-z0-9_]*) \(from .*\) is not set$/;

/** What a valid file configures, in one line: adapters, tenants, the routing tree and the broker ingest. */
function summary(c: Config): string {
  const ingest = [
    c.ingest.nats ? `NATS stream ${c.ingest.nats.stream} (${counted(Object.keys(c.ingest.nats.subjects).length, 'subject')})` : null,
    c.ingest.mqtt ? `MQTT (${counted(Object.keys(c.ingest.mqtt.topics).length, 'topic')})` : null,
  ].filter((x) => x !== null);
  return `${counted(c.adapters.length, 'adapter')}, ${counted(c.tenants.length, 'tenant')}, ${c.route ? 'a routing tree' : 'no routing tree'}, ${
    ingest.length > 0 ? `ingest from ${ingest.join(' and ')}` : 'no broker ingest'
  }`;
}

/** A file with problems beyond unset environment variables: the problems, and the warnings found on the way. */
class CheckFailed extends Error {
  readonly code = 'check_failed';
  constructor(
    readonly problems: string[],
    readonly warnings: string[],
  ) {
    super(problems.join('; '));
  }
}

/**
 * Loads `file` as serve would. An environment variable the file references
 * and this shell does not set (`${env:PORT}` on a machine that is not the
 * replica's) is not the file's fault: it is a warning, and the file is
 * checked again with a placeholder in its place, so every other problem is
 * still found.
 */
function check(file: string): { config: Config | null; warnings: string[] } {
  try {
    return { config: loadConfigFile(file), warnings: [] };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const unset = error.problems.map((p) => UNSET_ENV.exec(p)).filter((m): m is RegExpExecArray => m !== null);
    if (unset.length === 0) throw error;
    const names = [...new Set(unset.map((m) => m[2]!))];
    const warnings = unset.map((m) => `${m[1]}: environment variable ${m[2]} is not set here; checked with a placeholder (set it where the replica runs)`);
    const saved = names.map((n) => [n, process.env[n]] as const);
    for (const n of names) process.env[n] = `placeholder-${n}`;
    try {
      return { config: loadConfigFile(file), warnings };
    } catch (again) {
      if (!(again instanceof ConfigError)) throw again;
      // A field a placeholder cannot stand for (a URL from the environment) is left unchecked, said as a warning.
      const fieldsOfUnset = new Set(unset.map((m) => m[1]!));
      const rest = again.problems.filter((p) => ![...fieldsOfUnset].some((f) => p.startsWith(`${f}: `) || p.includes(`: ${f}: `)));
      if (rest.length > 0) throw new CheckFailed(rest, warnings);
      return { config: null, warnings };
    } finally {
      for (const [n, v] of saved) {
        if (v === undefined) delete process.env[n];
        else process.env[n] = v;
      }
    }
  }
}

/**
 * `onceonly check-config FILE…`: each file read as `serve` and a SIGHUP read
 * it (secret references resolved, every field checked), starting nothing.
 * A good file prints one line saying what it configures (and a warning for
 * each environment variable not set in this shell); a bad one prints every
 * problem on a line of its own. Exits 2 when any file is bad, else 0.
 */
export function checkConfigCommand(program: Command): void {
  program
    .command('check-config')
    .description('check config files as serve would load them, print every problem, start nothing (exit 0 all valid, 2 not)')
    .argument('<file...>', 'YAML or JSON config files')
    .action((files: string[]) => {
      for (const file of files) {
        try {
          const { config, warnings } = check(file);
          process.stdout.write(
            `${file}: valid${config ? ` (${summary(config)})` : ''}${warnings.length > 0 ? `, ${counted(warnings.length, 'warning')}` : ''}\n`,
          );
          for (const w of warnings) process.stdout.write(`  warning: ${w}\n`);
        } catch (error) {
          if (!(error instanceof ConfigError) && !(error instanceof CheckFailed)) throw error;
          // A problem of the whole file (unreadable, not YAML) names the file itself: said once.
          const lines = error.problems.map((p) => `  ${p.startsWith(`${file}: `) ? p.slice(file.length + 2) : p}\n`);
          const warned = error instanceof CheckFailed ? error.warnings.map((w) => `  warning: ${w}\n`) : [];
          process.stderr.write(`${file}: ${counted(error.problems.length, 'problem')}\n${lines.join('')}${warned.join('')}`);
          process.exitCode = 2;
        }
      }
    });
}
