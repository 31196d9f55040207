import type { Command } from 'commander';
import { ConfigError, loadConfigFile } from '../config/load.js';
import { defaultConfig } from '../config/schema.js';
import { LABEL_NAME } from '../core/matcher.js';
import { formatDuration } from '../core/duration.js';
import { reachedAdapters, reachedEscalation } from '../delivery/routing.js';
import { labelsAsSent } from '../inputs/labels.js';
import { MAX_LABEL_VALUE } from '../inputs/limits.js';
// The adapters' config schemas: a config naming them parses.
import '../delivery/adapters/index.js';

/** `name=value` or `name="value"` (amtool's label form); the name as label names are. */
export function parseLabelArg(arg: string): [string, string] {
  const m = /^([^=]*)=(.*)$/s.exec(arg);
  if (!m || !LABEL_NAME.test(m[1]!))
    throw new ConfigError(`label ${JSON.stringify(arg)} is not name=value (a name is a letter or _, then letters, digits or _)`);
  let value = m[2]!;
  if (value.startsWith('"')) {
    try {
      value = JSON.parse(value) as string;
    } catch {
      throw new ConfigError(`label ${JSON.stringify(arg)}: the quoted value is not closed or has an unknown escape`);
    }
  }
  if (value.length > MAX_LABEL_VALUE) throw new ConfigError(`label ${m[1]}: a value is at most ${MAX_LABEL_VALUE.toLocaleString('en')} characters`);
  return [m[1]!, value];
}

export function routesCommand(program: Command): void {
  const routes = program.command('routes').description('the routing tree (config route:): which adapters a label set reaches');
  routes
    .command('test')
    .description('print the adapters a label set reaches, comma-separated, as `amtool config routes test` prints receivers, then its escalation if it has one')
    .argument('[labels...]', 'name=value pairs')
    .option('--config <file>', 'YAML or JSON config file (env ONCEONLY_CONFIG)', process.env.ONCEONLY_CONFIG)
    .option('--tenant <id>', 'the tenant label (default: default, the tenant of a server without tenants)')
    .action((labels: string[], opts: { config?: string; tenant?: string }) => {
      try {
        const config = opts.config ? loadConfigFile(opts.config) : defaultConfig;
        const set: Record<string, string> = {};
        for (const arg of labels) {
          const [name, value] = parseLabelArg(arg);
          set[name] = value;
        }
        // The labels as live routing builds them from an alert with these labels (severity as sent, oo_severity onceonly's).
        const tenant = opts.tenant ?? set.tenant ?? 'default';
        const sent = labelsAsSent(set, tenant);
        process.stdout.write(`${reachedAdapters(config, sent).join(',')}\n`);
        // A second line only where a route escalates: the first stays what amtool prints.
        const steps = reachedEscalation(config, sent);
        if (steps.length > 0)
          process.stdout.write(
            `escalates unless acknowledged: ${steps.map((s) => `after ${formatDuration(s.afterMs)} to ${s.to.join(',')}`).join(', then ')}\n`,
          );
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        process.stderr.write(`onceonly routes test: ${err.message}\n`);
        process.exitCode = 2;
      }
    });
}
