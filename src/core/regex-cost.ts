/**
 * An upper estimate of the size of the program RE2 compiles a pattern to,
 * read from the text alone in one pass: compiling is the expensive step
 * (`.{0,1000}` is about 2,000 instructions and 40 ms), and matching costs
 * the program's size for every character matched. A matcher is written by a
 * tenant, so its cost is judged before it is compiled.
 *
 * Each literal, escape, class or `.` weighs 1; a group weighs what it holds
 * plus 2; an alternation adds 1 per `|`; `*`, `+` and `?` add 1 to what they
 * repeat; `{n,m}` multiplies it by the larger bound (`{n,}` by n + 1).
 * Nested repeats multiply, as they do in the compiled program. The estimate
 * never undercounts a program RE2 would accept; a pattern RE2 refuses is
 * refused by its compiler after this.
 */
export function regexCost(pattern: string): number {
  // One entry per open group: the weight of its finished pieces, and of the last piece (what a repeat applies to).
  const stack: Array<{ done: number; last: number }> = [{ done: 0, last: 0 }];
  const top = () => stack[stack.length - 1]!;
  const piece = (w: number) => {
    const t = top();
    t.done += t.last;
    t.last = w;
  };
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === '\\') {
      const end = afterEscape(pattern, i);
      // `\Q…\E` quotes a literal string: one instruction per character.
      piece(pattern[i + 1] === 'Q' ? Math.max(1, end - i - 4) : 1);
      i = end;
      continue;
    }
    if (c === '[') {
      i = afterClass(pattern, i);
      piece(1);
      continue;
    }
    if (c === '(') {
      const flagsOnly = /^\(\?[a-zA-Z-]*\)/.exec(pattern.slice(i, i + 16));
      if (flagsOnly) {
        i += flagsOnly[0].length;
        continue;
      }
      stack.push({ done: 0, last: 0 });
      i += 1;
      continue;
    }
    if (c === ')' && stack.length > 1) {
      const g = stack.pop()!;
      piece(g.done + g.last + 2);
      i += 1;
      continue;
    }
    if (c === '|') {
      const t = top();
      t.done += t.last + 1;
      t.last = 0;
      i += 1;
      continue;
    }
    if (c === '*' || c === '+' || c === '?') {
      top().last += 1;
      i += 1;
      continue;
    }
    if (c === '{') {
      const rep = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i, i + 24));
      if (rep) {
        const min = Number(rep[1]);
        const max = rep[2] === undefined ? min : rep[3] === '' ? min + 1 : Number(rep[3]);
        const t = top();
        t.last = t.last * Math.max(min, max, 1) + Math.max(0, max - min);
        i += rep[0].length;
        continue;
      }
    }
    piece(1);
    i += 1;
  }
  while (stack.length > 1) {
    const g = stack.pop()!;
    piece(g.done + g.last + 2);
  }
  const t = top();
  return t.done + t.last;
}

/** The index just after the escape that starts at `i`: `\Q…\E`, `\p{…}`, `\x{…}`, `\xHH` or one character. */
function afterEscape(p: string, i: number): number {
  const n = p[i + 1];
  if (n === 'Q') {
    const end = p.indexOf('\\E', i + 2);
    return end < 0 ? p.length : end + 2;
  }
  if ((n === 'p' || n === 'P' || n === 'x') && p[i + 2] === '{') {
    const end = p.indexOf('}', i + 3);
    return end < 0 ? p.length : end + 1;
  }
  if (n === 'x') return Math.min(p.length, i + 4);
  if (n === 'p' || n === 'P') return Math.min(p.length, i + 3);
  return Math.min(p.length, i + 2);
}

/** The index just after the class that starts at `i` (a `]` first in it is a literal; `[:name:]` and escapes inside). */
function afterClass(p: string, i: number): number {
  let j = i + 1;
  if (p[j] === '^') j++;
  if (p[j] === ']') j++;
  while (j < p.length && p[j] !== ']') {
    if (p[j] === '\\') j = afterEscape(p, j);
    else if (p.startsWith('[:', j)) {
      const end = p.indexOf(':]', j + 2);
      j = end < 0 ? j + 1 : end + 2;
    } else j++;
  }
  return Math.min(p.length, j + 1);
}
