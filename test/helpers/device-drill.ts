/**
 * A recorded stream: 50 terminals × 40 events, round-robin so that no two
 * events of one terminal are in flight together; every fifth terminal reboots
 * at its 25th event (sequence restarts at 1); every tenth line is repeated at
 * once, as a reconnecting producer does.
 */
export function recordedStream() {
  const lines: string[] = [];
  /** the lines of each round (one event per terminal, and the repeats among them), in order */
  const rounds: string[][] = [];
  const expected = new Map<string, { boot: string; sequence: number; state: string }>();
  let transitions = 0;
  const last = new Map<string, string>();
  for (let i = 0; i < 40; i++) {
    const round: string[] = [];
    rounds.push(round);
    for (let d = 0; d < 50; d++) {
      const device = `pos-${d}`;
      const rebooted = d % 5 === 0 && i >= 25;
      const boot = rebooted ? 'b2' : 'b1';
      const sequence = rebooted ? i - 24 : 100 + i;
      const state = ['IDLE', 'IDLE', 'BUSY', 'BUSY', 'BUSY', 'OFFLINE'][(i + d) % 6]!;
      const line = JSON.stringify({
        tenant_id: 'acme',
        device_id: device,
        boot_id: boot,
        sequence,
        state,
        observed_at: new Date(Date.UTC(2026, 10, 30, 12) + i * 1000).toISOString(),
      });
      lines.push(line);
      round.push(line);
      if (lines.length % 10 === 0) {
        lines.push(line);
        round.push(line);
      }
      if (last.has(device) && last.get(device) !== state) transitions++;
      last.set(device, state);
      expected.set(device, { boot, sequence, state });
    }
  }
  return { lines, rounds, expected, transitions, identities: 2000 };
}
