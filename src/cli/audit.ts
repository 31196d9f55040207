import type { Command } from 'commander';
import { printable } from './table.js';
import { fail, failed, remoteOptions, withServer, type RemoteOptions } from './remote.js';

interface AuditEntry {
  at: string;
  kind: string;
  decision: string;
  reason: string;
  replica: string;
  request_id: string;
}

/** `onceonly audit KEY`: a key's audit trail from a running server (ledger mode on Postgres). */
export function auditCommand(program: Command): void {
  remoteOptions(
    program
      .command('audit')
      .description("a key's audit trail: every decision, when, why, by which replica and request")
      .argument('<key>', 'the key (dedup_key, violation key, or device/boot/sequence)'),
  )
    .option('--json', 'print the API answer as JSON')
    .action(async (key: string, o: RemoteOptions & { json?: boolean }) => {
      await withServer(o, async (client) => {
        const a = await client.get(`/v1/audit?key=${encodeURIComponent(key)}`);
        if (a.status !== 200) return fail('audit', failed(key, a));
        if (o.json) return void process.stdout.write(`${JSON.stringify(a.body)}\n`);
        const rows = (a.body as { audit: AuditEntry[] }).audit;
        process.stdout.write(
          rows.length === 0
            ? `no audit rows for ${key}\n`
            : `${rows.map((r) => printable(`${r.at}  ${r.kind}  ${r.decision}/${r.reason || '-'}  ${r.replica}  ${r.request_id}`)).join('\n')}\n`,
        );
      });
    });
}
