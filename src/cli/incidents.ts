import type { Command } from 'commander';
import type { IncidentView } from '../engine/views.js';
import { fail, failed, remoteOptions, withServer, type RemoteOptions } from './remote.js';
import { textTable } from './table.js';

/** Characters of the summary a list row shows. */
const SUMMARY_SHOWN = 60;

/**
 * What an incident is, in a few words: its identity fields (or an alert's
 * name, or PagerDuty's source) and its latest summary, cut to one line.
 */
export function incidentWhat(i: IncidentView): string {
  const who = [i.element_id, i.fault_class, i.root_cause_id].filter((x): x is string => x !== undefined && x !== '');
  if (who.length === 0) {
    const named = i.labels.alertname ?? i.labels.source;
    if (named) who.push(named);
  }
  const summary = i.summary.replace(/\s+/g, ' ').trim();
  if (summary) who.push(summary.length > SUMMARY_SHOWN ? `${summary.slice(0, SUMMARY_SHOWN - 1)}…` : summary);
  return who.join(' · ');
}

export function formatIncidents(list: IncidentView[]): string {
  if (list.length === 0) return 'no live incidents';
  const rows = list.map((i) => [
    i.dedup_key,
    i.severity + (i.cleared ? ' cleared' : ''),
    String(i.refires),
    String(i.updates),
    i.created_at,
    i.last_seen_at,
    incidentWhat(i),
  ]);
  return textTable(['key', 'severity', 'refires', 'updates', 'created', 'last seen', 'what'], rows);
}

/** `onceonly incidents ack KEY` and `onceonly ack KEY`: one acknowledgement, as POST /v1/incidents/{key}/ack takes it. */
function ackCommand(cmd: Command, what: string): void {
  remoteOptions(cmd.description("acknowledge a live incident's episode: its adapters get one update saying so").argument('<key>', 'its dedup_key'))
    .option('--by <name>', 'who acknowledges, as the history shows it')
    .action(async (key: string, o: RemoteOptions & { by?: string }) => {
      await withServer(o, async (client) => {
        const a = await client.post(`/v1/incidents/${encodeURIComponent(key)}/ack`, JSON.stringify(o.by !== undefined ? { by: o.by } : {}));
        if (a.status !== 200) return fail(what, failed(key, a));
        const outcome = (a.body as { outcome: string }).outcome;
        process.stdout.write(`${outcome === 'repeat' ? 'already acknowledged' : 'acknowledged'} ${key}\n`);
      });
    });
}

/** `onceonly incidents list|show|ack|close`, and `onceonly ack`: the live incidents of a running server. */
export function incidentsCommand(program: Command): void {
  ackCommand(program.command('ack'), 'ack');
  const cmd = program.command('incidents').description('list, show, acknowledge or close the live incidents of a running server');
  ackCommand(cmd.command('ack'), 'incidents ack');

  remoteOptions(cmd.command('list').description('live incidents, most recently seen first'))
    .option('--limit <n>', 'at most this many (1..1000)', '100')
    .option('--json', 'print the API answer as JSON')
    .action(async (o: RemoteOptions & { limit: string; json?: boolean }) => {
      await withServer(o, async (client) => {
        const a = await client.get(`/v1/incidents?limit=${encodeURIComponent(o.limit)}`);
        if (a.status !== 200) return fail('incidents list', failed('listing failed', a));
        const list = (a.body as { incidents: IncidentView[] }).incidents;
        process.stdout.write(`${o.json ? JSON.stringify(a.body) : formatIncidents(list)}\n`);
      });
    });

  remoteOptions(cmd.command('show').description('one live incident').argument('<key>', 'its dedup_key')).action(async (key: string, o: RemoteOptions) => {
    await withServer(o, async (client) => {
      const a = await client.get(`/v1/incidents/${encodeURIComponent(key)}`);
      if (a.status !== 200) return fail('incidents show', failed(key, a));
      process.stdout.write(`${JSON.stringify(a.body, null, 2)}\n`);
    });
  });

  remoteOptions(cmd.command('close').description('close a live incident: its next arrival opens a new one').argument('<key>', 'its dedup_key')).action(
    async (key: string, o: RemoteOptions) => {
      await withServer(o, async (client) => {
        const a = await client.del(`/v1/incidents/${encodeURIComponent(key)}`);
        if (a.status !== 204) return fail('incidents close', failed(key, a));
        process.stdout.write(`closed ${key}\n`);
      });
    },
  );
}
