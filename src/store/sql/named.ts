/**
 * SQL shared by the SQLite and Postgres backends is written once with named
 * parameters (`@name`), which better-sqlite3 binds from an object as it is.
 * Postgres takes positional `$n`: `forPg` rewrites the text once, at load,
 * and `bind` orders an object's values to match.
 */
export interface PgStatement {
  text: string;
  names: string[];
}

export function forPg(sql: string): PgStatement {
  const names: string[] = [];
  const text = sql.replace(/@([a-zA-Z_]\w*)/g, (_, name: string) => {
    let i = names.indexOf(name);
    if (i < 0) i = names.push(name) - 1;
    return `$${i + 1}`;
  });
  return { text, names };
}

export function bind(s: PgStatement, values: Record<string, unknown>): unknown[] {
  return s.names.map((n) => {
    if (!(n in values)) throw new Error(`no value for @${n}`);
    return values[n];
  });
}
