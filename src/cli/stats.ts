import type { Command } from 'commander';
import { fail, failed, remoteOptions, withServer, type RemoteOptions } from './remote.js';
import { formatReport, type ReplayReport } from './replay.js';

interface Stats {
  received: number;
  applied: number;
  duplicate: number;
  rejected: Record<string, number>;
  sequence_gaps: number;
}

/** `onceonly stats`: the device-event accounting of a running server (its replica), as the replay report prints it. */
export function statsCommand(program: Command): void {
  remoteOptions(program.command('stats').description("print a running server's event accounting: received = applied + duplicate + rejected"))
    .option('--json', 'print the API answer as JSON')
    .action(async (o: RemoteOptions & { json?: boolean }) => {
      await withServer(o, async (client) => {
        const a = await client.get('/v1/stats');
        if (a.status !== 200) return fail('stats', failed('reading /v1/stats failed', a));
        const s = a.body as Stats;
        const rejected = Object.values(s.rejected).reduce((x, y) => x + y, 0);
        const holds = s.received === s.applied + s.duplicate + rejected;
        if (o.json) process.stdout.write(`${JSON.stringify({ ...s, invariant_holds: holds })}\n`);
        else {
          const report: ReplayReport = { ...s, notifications: 0, unanswered: 0, invariant_holds: holds };
          // The replay report minus what only a replay knows (its own unanswered requests and notifications).
          process.stdout.write(
            `${formatReport(report)
              .split('\n')
              .filter((l) => !/^(unanswered|notifications)/.test(l))
              .join('\n')}\n`,
          );
        }
        if (!holds) process.exitCode = 1;
      });
    });
}
