/**
 * A progress bar on stderr for long commands. On a terminal it redraws one
 * line; elsewhere (CI logs, pipes) it prints a line at every 10%.
 */
export class Progress {
  private done = 0;
  private lastDecile = -1;
  private readonly started = performance.now();
  private readonly tty = Boolean(process.stderr.isTTY);

  constructor(
    private readonly label: string,
    private readonly total: number,
  ) {}

  tick(n = 1): void {
    this.done += n;
    const frac = this.total === 0 ? 1 : this.done / this.total;
    const rate = Math.round(this.done / Math.max(0.001, (performance.now() - this.started) / 1000));
    if (this.tty) {
      const width = 30;
      const filled = Math.round(frac * width);
      process.stderr.write(
        `\r${this.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.floor(frac * 100)}% ${this.done}/${this.total} ${rate}/s`,
      );
    } else {
      const decile = Math.floor(frac * 10);
      if (decile !== this.lastDecile) {
        this.lastDecile = decile;
        process.stderr.write(`${this.label}: ${decile * 10}% (${this.done}/${this.total}, ${rate}/s)\n`);
      }
    }
  }

  finish(): void {
    if (this.tty) process.stderr.write('\n');
  }
}
