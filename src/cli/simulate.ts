import { existsSync } from 'node:fs';
import { printable } from './table.js';
import type { Command } from 'commander';
import { SimulateError, simulate, type SimulationReport } from '../simulate/simulate.js';
import { ConfigError, loadConfigFile } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { systemClock } from '../core/clock.js';
import { MatcherError, parseMatcher, type Matcher } from '../core/matcher.js';
import { DEFAULT_STORE_URL, openStore, shown, sqliteFileOf, StoreUrlError } from '../store/open.js';
import { parseDuration } from './silences.js';
import { textTable } from './table.js';
// The adapters' config schemas: a config naming them parses.
import '../delivery/adapters/index.js';

interface SimulateOpts {
  config?: string;
  since: string;
  store: string;
  silence: string[];
  json?: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** Bad input: one line, exit 2, nothing read. */
class Usage extends Error {
  readonly code = 'usage';
}

/**
 * `onceonly simulate --config CANDIDATE`: replays the arrivals the store's
 * histories recorded over a span through a candidate config, in memory, and
 * prints per adapter what happened against what would have, then the keys
 * whose outcome differs.
 */
export function simulateCommand(program: Command): void {
  program
    .command('simulate')
    .description('replay the recorded arrivals of a span through a candidate config, in memory, and show what would change')
    .option('--config <file>', 'the candidate config (YAML or JSON)')
    .option('--since <d>', 'how far back the span starts (24h, 90m, 7d)', '24h')
    .option('--store <url>', 'the store whose histories are replayed, read only (env ONCEONLY_STORE)', process.env.ONCEONLY_STORE ?? DEFAULT_STORE_URL)
    .option('--silence <matcher>', 'a silence more over the span, in every tenant: repeat for more matchers of that one silence', collect, [])
    .option('--json', 'print the report as one JSON object')
    .action(async (o: SimulateOpts) => {
      let config: Config;
      let since: number;
      let silence: Matcher[];
      try {
        if (!o.config) throw new Usage('--config is required: the candidate config to replay through');
        config = loadConfigFile(o.config);
        since = systemClock.now() - durationOf(o.since);
        silence = o.silence.map((t) => {
          const { name, value, isRegex, isEqual } = parseMatcher(t);
          return { name, value, isRegex, isEqual };
        });
        const file = sqliteFileOf(o.store);
        if (file !== null && !existsSync(file)) throw new Usage(`no store at ${file}: give the --store a server writes to`);
      } catch (err) {
        if (!(err instanceof ConfigError || err instanceof MatcherError || err instanceof Usage)) throw err;
        process.stderr.write(`onceonly simulate: ${err.message}\n`);
        process.exitCode = 2;
        return;
      }
      let source: ReturnType<typeof openStore> | undefined;
      try {
        source = openStore(o.store, systemClock, { redisShards: config.redis.shards });
        await source.init?.();
        const report = await simulate({ source, config, since, ...(silence.length > 0 ? { silence } : {}) });
        process.stdout.write(o.json ? `${JSON.stringify(report)}\n` : `${formatReport(report).split('\n').map(printable).join('\n')}\n`);
      } catch (err) {
        process.stderr.write(
          `onceonly simulate: ${err instanceof StoreUrlError || err instanceof SimulateError ? '' : `store ${shown(o.store)}: `}${(err as Error).message}\n`,
        );
        process.exitCode = err instanceof StoreUrlError || err instanceof SimulateError ? 2 : 1;
      } finally {
        await source?.close().catch(() => {});
      }
    });
}

function durationOf(text: string): number {
  try {
    return parseDuration(text);
  } catch (err) {
    throw new Usage(`--since: ${(err as Error).message}`);
  }
}

const cell = (a: number, b: number) => (a === b ? String(a) : `${a} → ${b}`);

/** The report as a person reads it: the span, a table per adapter (recorded → candidate), then the keys that differ. */
export function formatReport(r: SimulationReport): string {
  const lines = [
    `replayed ${r.keys.replayed} key(s) recorded from ${r.since} to ${r.until}` +
      (r.keys.not_replayed > 0 ? ` (${r.keys.not_replayed} not replayed: violation windows and device events are not simulated)` : ''),
    '',
  ];
  const names = Object.keys(r.adapters);
  lines.push(
    names.length === 0
      ? 'no adapters'
      : textTable(
          ['Adapter', 'Created', 'Updated', 'Closed', 'Muted'],
          names.map((n) => {
            const { recorded: a, candidate: b } = r.adapters[n]!;
            return [n, cell(a.created, b.created), cell(a.updated, b.updated), cell(a.closed, b.closed), cell(a.muted, b.muted)];
          }),
        ),
    '',
    r.differences.length === 0 ? 'no key differs: the candidate does what happened' : `${r.differences.length} key(s) differ (recorded, then candidate):`,
  );
  for (const d of r.differences) lines.push(`  ${d.tenant === 'default' ? '' : `${d.tenant}/`}${d.key}${d.about ? `  (${d.about})` : ''}: ${d.first}`);
  if (r.approximate.length > 0) {
    lines.push('', `${r.approximate.length} replay(s) approximate:`);
    for (const a of r.approximate) lines.push(`  ${a.key}: ${a.why}`);
  }
  return lines.join('\n');
}
