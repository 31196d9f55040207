import type { Command } from 'commander';
import { formatMatcher, MatcherError, parseMatcher, type Matcher } from '../core/matcher.js';
import { parseDuration as durationMs } from '../core/duration.js';
import { fail, failed, remoteOptions, withServer, type RemoteOptions } from './remote.js';
import { textTable } from './table.js';

interface Gettable {
  id: string;
  status: { state: string };
  matchers: Matcher[];
  startsAt: string;
  endsAt: string;
  createdBy: string;
  comment: string;
}

/** The longest silence the CLI makes: 100 years (a longer end is no date a server can hold). */
const MAX_DURATION_MS = 100 * 365 * 86_400_000;

/** A silence's length as amtool takes it: `2h`, `90m`, `1h30m`, `1d`. */
export function parseDuration(text: string): number {
  const ms = durationMs(text);
  if (!(ms <= MAX_DURATION_MS)) throw new Error(`${JSON.stringify(text)} is longer than a silence can be (at most 100 years)`);
  return ms;
}

export function formatSilences(list: Gettable[]): string {
  if (list.length === 0) return 'no silences';
  const rows = list.map((s) => [s.id, s.matchers.map(formatMatcher).join(' '), s.status.state, s.endsAt, s.createdBy, s.comment]);
  return textTable(['ID', 'Matchers', 'State', 'Ends At', 'Created By', 'Comment'], rows);
}

const usage = (command: string, message: string) => {
  process.stderr.write(`onceonly silence ${command}: ${message}\n`);
  process.exitCode = 2;
};

/** `onceonly silence add|list|expire`: amtool's silence verbs, for people without amtool. */
export function silenceCommand(program: Command): void {
  const cmd = program.command('silence').description("mute keys for a while, as amtool's silence commands do (docs/noise.md)");

  remoteOptions(cmd.command('add').description('add a silence; prints its id'))
    .argument('<matchers...>', 'matchers: name=value, name!=value, name=~regex, name!~regex (quote them for the shell)')
    .requiredOption('--comment <text>', 'why (required)')
    .option('--author <name>', 'who (default: $USER)', process.env.USER ?? 'onceonly')
    .option('--duration <d>', 'how long from now (2h, 90m, 1d)', '1h')
    .option('--start <rfc3339>', 'when it starts (default: now)')
    .action(async (texts: string[], opts: RemoteOptions & { comment: string; author: string; duration: string; start?: string }) => {
      let matchers: Matcher[];
      let startsAt: number;
      let endsAt: number;
      try {
        matchers = texts.map((t) => {
          const { name, value, isRegex, isEqual } = parseMatcher(t);
          return { name, value, isRegex, isEqual };
        });
        startsAt = opts.start === undefined ? Date.now() : Date.parse(opts.start);
        if (Number.isNaN(startsAt)) throw new Error(`--start ${JSON.stringify(opts.start)} is not an RFC 3339 time`);
        endsAt = startsAt + parseDuration(opts.duration);
      } catch (err) {
        return usage('add', err instanceof MatcherError || err instanceof Error ? err.message : String(err));
      }
      await withServer(opts, async (client) => {
        const body = {
          matchers,
          startsAt: new Date(startsAt).toISOString(),
          endsAt: new Date(endsAt).toISOString(),
          createdBy: opts.author,
          comment: opts.comment,
        };
        const a = await client.post('/api/v2/silences', JSON.stringify(body));
        if (a.status !== 200) return fail('silence add', failed('not added', a));
        process.stdout.write(`${(a.body as { silenceID: string }).silenceID}\n`);
      });
    });

  remoteOptions(cmd.command('list').description('the silences in force and pending (with --expired, the ended ones)'))
    .argument('[filters...]', 'only silences with a matcher these match, as amtool query takes them')
    .option('--expired', 'the ended ones instead (kept 120 h)')
    .option('--json', 'print the API answer as JSON')
    .action(async (filters: string[], opts: RemoteOptions & { expired?: boolean; json?: boolean }) => {
      for (const f of filters) {
        try {
          parseMatcher(f);
        } catch (err) {
          return usage('list', (err as Error).message);
        }
      }
      await withServer(opts, async (client) => {
        const q = filters.map((f) => `filter=${encodeURIComponent(f)}`).join('&');
        const a = await client.get(`/api/v2/silences${q ? `?${q}` : ''}`);
        if (a.status !== 200) return fail('silence list', failed('listing failed', a));
        const list = (a.body as Gettable[]).filter((s) => (s.status.state === 'expired') === Boolean(opts.expired));
        process.stdout.write(`${opts.json ? JSON.stringify(list) : formatSilences(list)}\n`);
      });
    });

  remoteOptions(cmd.command('expire').description('end silences now; what they held is released'))
    .argument('<ids...>', 'silence ids (from list)')
    .action(async (ids: string[], opts: RemoteOptions) => {
      await withServer(opts, async (client) => {
        for (const id of ids) {
          const a = await client.del(`/api/v2/silence/${encodeURIComponent(id)}`);
          if (a.status === 200) process.stdout.write(`expired ${id}\n`);
          else fail('silence expire', failed(id, a));
        }
      });
    });
}
