/**
 * A text table for the terminal. Every cell is stored text a producer or a
 * tenant wrote (a silence's comment, a key), so control characters are shown
 * escaped (`\x1b`, `\n`) rather than sent raw: an ESC sequence in a comment
 * must not act on the operator's terminal, and a line break must not forge a row.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is what it is for.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
/** Bidirectional controls and line or paragraph separators: they reorder or break what the terminal shows. */
const BIDI = /[\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** Text as it may reach a terminal: C0 and C1 controls shown as `\xNN`, bidirectional controls and separators as `\u{NNNN}`. */
export const printable = (text: string) =>
  text
    .replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
    .replace(BIDI, (c) => `\\u{${c.charCodeAt(0).toString(16).padStart(4, '0')}}`);

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
