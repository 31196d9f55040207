import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { jsonClient } from './http-client.js';
import { Progress } from './progress.js';

export interface ReplayReport {
  received: number;
  applied: number;
  duplicate: number;
  rejected: Record<string, number>;
  sequence_gaps: number;
  notifications: number;
  /** requests that got no usable answer: the invariant cannot hold while any remain */
  unanswered: number;
  invariant_holds: boolean;
}

/**
 * The device-event drill: sends a recorded NDJSON stream of device events through
 * the public HTTP boundary with bounded concurrency and accounts for every
 * line from the answers: received = applied + duplicate + rejected.
 */
export async function replay(file: string, baseUrl: string, concurrency: number, token?: string): Promise<ReplayReport> {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  const client = jsonClient(baseUrl, token);
  const r: ReplayReport = { received: 0, applied: 0, duplicate: 0, rejected: {}, sequence_gaps: 0, notifications: 0, unanswered: 0, invariant_holds: false };
  const progress = new Progress('replay', lines.length);
  // One device's events must arrive in the file's order (sent side by side they overtake each other and read
  // as stale sequences and false gaps, the very signals worth paging on); devices are independent, so
  // `concurrency` devices are sent to at once, each its lines one at a time.
  const queues = [...byDevice(lines).values()];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(concurrency, queues.length)) }, async () => {
      for (let q = queues[next++]; q; q = queues[next++])
        for (const line of q) {
          const a = await client.post('/v1/events', line);
          r.received++;
          const body = a.body as { outcome?: string; reason?: string; gap?: { from: number; to: number } | null; transition?: unknown } | null;
          if (a.status === 200 && body?.outcome === 'applied') {
            r.applied++;
            if (body.gap) r.sequence_gaps += body.gap.to - body.gap.from + 1;
            if (body.transition) r.notifications++;
          } else if (a.status === 200 && body?.outcome === 'duplicate') {
            r.duplicate++;
          } else if (a.status === 200 && body?.outcome === 'rejected') {
            r.rejected[body.reason ?? 'unknown'] = (r.rejected[body.reason ?? 'unknown'] ?? 0) + 1;
          } else if (a.status === 400) {
            r.rejected.invalid = (r.rejected.invalid ?? 0) + 1;
          } else {
            r.unanswered++;
          }
          progress.tick();
        }
    }),
  );
  progress.finish();
  client.close();
  const rejected = Object.values(r.rejected).reduce((a, b) => a + b, 0);
  r.invariant_holds = r.unanswered === 0 && r.received === r.applied + r.duplicate + rejected;
  return r;
}

/** The lines of each device (tenant and device id), in file order; a line that names none is a queue of its own. */
function byDevice(lines: readonly string[]): Map<string, string[]> {
  const queues = new Map<string, string[]>();
  lines.forEach((line, i) => {
    let id = `line ${i}`;
    try {
      const e = JSON.parse(line) as { tenant_id?: unknown; device_id?: unknown } | null;
      if (e && typeof e.tenant_id === 'string' && typeof e.device_id === 'string') id = JSON.stringify([e.tenant_id, e.device_id]);
    } catch {
      // not JSON: sent as it is, and counted as the server answers it
    }
    const q = queues.get(id);
    if (q) q.push(line);
    else queues.set(id, [line]);
  });
  return queues;
}

export function formatReport(r: ReplayReport): string {
  const rejected = Object.values(r.rejected).reduce((a, b) => a + b, 0);
  const reasons = Object.entries(r.rejected)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return [
    `received       ${r.received}`,
    `applied        ${r.applied}`,
    `duplicate      ${r.duplicate}`,
    `rejected       ${rejected}${reasons ? ` (${reasons})` : ''}`,
    `unanswered     ${r.unanswered}`,
    `sequence gaps  ${r.sequence_gaps} missing`,
    `notifications  ${r.notifications}`,
    `invariant      received = applied + duplicate + rejected: ${r.invariant_holds ? 'holds' : 'BROKEN'}`,
  ].join('\n');
}

export function replayCommand(program: Command): void {
  program
    .command('replay')
    .description('send a recorded NDJSON stream of device events to a server and print the accounting report')
    .argument('<file>', 'NDJSON file, one POST /v1/events body per line')
    .option('--url <url>', 'the server, e.g. http://127.0.0.1:8080 (env ONCEONLY_URL)', process.env.ONCEONLY_URL)
    .option('--concurrency <n>', 'devices sent to at once; each device’s lines go one at a time, in file order', '16')
    .option('--token <token>', 'bearer token (env ONCEONLY_TOKEN)', process.env.ONCEONLY_TOKEN)
    .option('--json', 'print the report as JSON')
    .action(async (file: string, opts: { url?: string; concurrency: string; token?: string; json?: boolean }) => {
      if (!opts.url) {
        process.stderr.write('onceonly replay: give the server with --url or ONCEONLY_URL, e.g. --url http://127.0.0.1:8080\n');
        process.exitCode = 2;
        return;
      }
      const n = Number(opts.concurrency);
      if (!Number.isInteger(n) || n < 1 || n > 1024) {
        process.stderr.write(`onceonly replay: --concurrency must be a whole number from 1 to 1024\n`);
        process.exitCode = 2;
        return;
      }
      let report: ReplayReport;
      try {
        report = await replay(file, opts.url, n, opts.token);
      } catch (err) {
        process.stderr.write(`onceonly replay: ${(err as Error).message}\n`);
        process.exitCode = 2;
        return;
      }
      process.stdout.write(`${opts.json ? JSON.stringify(report) : formatReport(report)}\n`);
      if (!report.invariant_holds) process.exitCode = 1;
    });
}
