/**
 * A text table for the terminal. Every cell is stored text a producer or a
 * tenant wrote (a silence's comment, a key), so control characters are shown
 * escaped (`\x1b`, `\n`) rather than sent raw: an ESC sequence in a comment
 * must not act on the operator's terminal, and a line break must not forge a row.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is what it is for.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

export const printable = (text: string) => text.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);

export function textTable(head: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const cells = rows.map((r) => r.map(printable));
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]!.length)));
  return [head, ...cells]
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
