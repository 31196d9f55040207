import type { Command } from 'commander';
import { answer, explain, type ViewEvent } from '../http/dashboard/public/explain.js';
import { fail, failed, remoteOptions, withServer, type RemoteOptions } from './remote.js';
import { printable } from './table.js';

/**
 * `onceonly explain KEY`: why did (or didn't) this key make a ticket? Its
 * history as a timeline, then one line that answers. A key with no history
 * never arrived (or is past the history's retention): that is the answer,
 * not an error.
 */
export function explainCommand(program: Command): void {
  remoteOptions(
    program
      .command('explain')
      .description("why a key did (or didn't) make a ticket: its history as a timeline, then the answer")
      .argument('<key>', 'a dedup_key as GET /v1/incidents lists it, a violation window key or a group key'),
  )
    .option('--json', "print the API answer (the key's raw history) as JSON")
    .action(async (key: string, o: RemoteOptions & { json?: boolean }) => {
      await withServer(o, async (client) => {
        const a = await client.get(`/v1/incidents/${encodeURIComponent(key)}/history`);
        if (a.status === 404 && (a.body as { error?: { code?: string } } | null)?.error?.code === 'not_found') {
          process.stdout.write(o.json ? `${JSON.stringify({ key, events: [] })}\n` : `${answer(key, [])} (or it is past the history's retention)\n`);
          return;
        }
        if (a.status !== 200) return fail('explain', failed(key, a));
        const body = a.body as { key: string; events: ViewEvent[] };
        // Each line escaped: a label or summary holding an ESC sequence or a bidi override must not act on the terminal.
        process.stdout.write(o.json ? `${JSON.stringify(body)}\n` : `${explain(body.key, body.events).map(printable).join('\n')}\n`);
      });
    });
}
