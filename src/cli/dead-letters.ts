import type { Command } from 'commander';
import { Progress } from './progress.js';
import { fail, failed, remoteOptions, withServer, type RemoteOptions } from './remote.js';

interface DeadLetter {
  id: string;
  adapter: string;
  kind: string;
  action: string;
  key: string;
  dead_at: string | null;
  attempts: Array<{ at: string; error: string }>;
  waiting?: number;
}

export function formatDeadLetters(list: DeadLetter[]): string {
  if (list.length === 0) return 'no dead letters';
  return list
    .map((d) => {
      const last = d.attempts.at(-1);
      const held = d.waiting
        ? `\n    holds ${d.waiting} later deliver${d.waiting === 1 ? 'y' : 'ies'} of this key to ${d.adapter}: retry or drop it to let them go`
        : '';
      return `${d.id}  ${d.adapter}  ${d.kind} ${d.action}  ${d.key}\n    dead since ${d.dead_at ?? '?'} after ${d.attempts.length} attempt(s); last: ${last?.error ?? '?'}${held}`;
    })
    .join('\n');
}

/** `onceonly dead-letters list|retry|drop`: the operator's side of GET /v1/dead-letters, POST …/retry and DELETE …. */
export function deadLettersCommand(program: Command): void {
  const cmd = program.command('dead-letters').description('list dead letters, put them back in the delivery queue, or drop one');

  remoteOptions(cmd.command('list').description('show the dead letters: adapter, key, every attempt'))
    .option('--limit <n>', 'at most this many (1..1000)', '100')
    .option('--json', 'print the API answer as JSON')
    .action(async (opts: RemoteOptions & { limit: string; json?: boolean }) => {
      await withServer(opts, async (client) => {
        const a = await client.get(`/v1/dead-letters?limit=${encodeURIComponent(opts.limit)}`);
        if (a.status !== 200) return fail('dead-letters list', failed('listing failed', a));
        const list = (a.body as { dead_letters: DeadLetter[] }).dead_letters;
        process.stdout.write(`${opts.json ? JSON.stringify(a.body) : formatDeadLetters(list)}\n`);
      });
    });

  remoteOptions(cmd.command('retry').description('re-queue one dead letter by id, or every one with --all'))
    .argument('[id]', 'the dead letter id (from list)')
    .option('--all', 'every dead letter of this tenant')
    .action(async (id: string | undefined, opts: RemoteOptions & { all?: boolean }) => {
      if (Boolean(id) === Boolean(opts.all)) {
        process.stderr.write('onceonly dead-letters retry: give one dead letter id, or --all (not both)\n');
        process.exitCode = 2;
        return;
      }
      await withServer(opts, async (client) => {
        const tried = new Set<string>();
        let queued = 0;
        const retry = async (one: string) => {
          tried.add(one);
          const a = await client.post(`/v1/dead-letters/${encodeURIComponent(one)}/retry`);
          if (a.status === 202) queued++;
          else fail('dead-letters retry', failed(one, a));
        };
        if (id) await retry(id);
        // --all pages through the list; one that dies again during the run is not retried twice.
        while (opts.all) {
          const a = await client.get('/v1/dead-letters?limit=1000');
          if (a.status !== 200) {
            fail('dead-letters retry', failed('listing failed', a));
            break;
          }
          const fresh = (a.body as { dead_letters: DeadLetter[] }).dead_letters.map((d) => d.id).filter((x) => !tried.has(x));
          if (fresh.length === 0) break;
          const progress = new Progress('retry', fresh.length);
          for (const one of fresh) {
            await retry(one);
            progress.tick();
          }
          progress.finish();
        }
        process.stdout.write(`re-queued ${queued} of ${tried.size} dead letter(s)\n`);
      });
    });

  remoteOptions(cmd.command('drop').description('delete one dead letter for good: it is never delivered, and what waited behind it goes on'))
    .argument('<id>', 'the dead letter id (from list)')
    .action(async (id: string, opts: RemoteOptions) => {
      await withServer(opts, async (client) => {
        const a = await client.del(`/v1/dead-letters/${encodeURIComponent(id)}`);
        if (a.status !== 204) return fail('dead-letters drop', failed(id, a));
        process.stdout.write(`dropped ${id}\n`);
      });
    });
}
