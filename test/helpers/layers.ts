import { readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';
import { filesUnder } from './files.js';

/**
 * The layer order of src/ (docs/architecture.md, "Layers"): a folder may
 * import its own files and the folders before it, never one after it or
 * beside it. `core` imports nothing of ours; the entry points (the CLI and
 * the library's index) come last.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ['core'],
  ['access'],
  ['config'],
  ['inputs'],
  ['store'],
  ['mute'],
  ['delivery'],
  ['history'],
  ['engine'],
  ['groups', 'heartbeats', 'escalation'],
  ['observe'],
  ['http', 'ingest'],
  ['app', 'simulate'],
  ['cli', 'index'],
];

/** The store's backends: none imports another (what they share lives in contract/ or sql/). */
export const BACKENDS = ['memory', 'sqlite', 'redis', 'postgres'];

/** Who may use store/sql/: the two SQL backends. */
const SQL_USERS = new Set(['sqlite', 'postgres', 'sql']);

export interface Import {
  /** the importing file, relative to src/ */
  from: string;
  /** the imported file, relative to src/ */
  to: string;
}

const rank = (path: string) => {
  const top = path.split('/')[0]!.replace(/\.(ts|js)$/, '');
  const i = LAYERS.findIndex((l) => l.includes(top));
  return { top, i };
};

/** The folder inside store/ a store file is in ('' for store/'s own files). */
const storePart = (path: string) => {
  const parts = path.split('/');
  return parts[0] === 'store' && parts.length > 2 ? parts[1]! : '';
};

/** Why an import breaks the layers, or null when it keeps them. */
/** A Redis facet (each store facet's file), and the files of the shard move that only the layout seam and the store use. */
const REDIS_FACET = /^store\/redis\/redis-(?!store\.ts$)[a-z-]+\.ts$/;
const SHARD_MOVE = /^store\/redis\/(adopter|reshard)\.ts$/;

export function breach({ from, to }: Import): string | null {
  const [a, b] = [rank(from), rank(to)];
  if (a.i < 0) return `${from}: its folder ${a.top} has no place in the layer order`;
  if (b.i < 0) return `${from} imports ${to}, whose folder ${b.top} has no place in the layer order`;
  if (a.top !== b.top && b.i >= a.i) return `${from} (${a.top}) imports ${to} (${b.top}), a layer above or beside it`;
  if (a.top === 'store' && b.top === 'store') {
    const [pa, pb] = [storePart(from), storePart(to)];
    if (pa !== pb && BACKENDS.includes(pa) && BACKENDS.includes(pb)) return `${from} imports ${to}: one store backend uses another's file`;
    if (pa === 'contract' && pb !== 'contract') return `${from} imports ${to}: the contract knows no backend`;
    if (pb === 'sql' && !SQL_USERS.has(pa)) return `${from} imports ${to}: only the SQL backends use sql/`;
    if (REDIS_FACET.test(from) && SHARD_MOVE.test(to)) return `${from} imports ${to}: a Redis facet reaches its keys through the layout seam only`;
  }
  return null;
}

/**
 * Every relative import (type-only, re-exports and dynamic ones included) of
 * every .ts file under `src`, and of the plain .js it serves (the dashboard's
 * scripts), whose imports name .js files as they are.
 */
export function importsOf(src: string): Import[] {
  return [...filesUnder(src, '.ts'), ...filesUnder(src, '.js')].flatMap((file) =>
    ts
      .preProcessFile(readFileSync(file, 'utf8'), true, true)
      .importedFiles.filter((f) => f.fileName.startsWith('.'))
      .map((f) => {
        const to = relative(src, normalize(join(dirname(file), f.fileName)));
        return { from: relative(src, file), to: file.endsWith('.js') ? to : to.replace(/\.js$/, '.ts') };
      }),
  );
}

/**
 * The import circles among `imports`: each a list of files that reach one
 * another (a strongly connected component of two or more, or a file that
 * imports itself), found with Tarjan's algorithm. A circle makes the files
 * one unit that no reader can take apart, whatever the layers say.
 */
export function circles(imports: readonly Import[]): string[][] {
  const edges = new Map<string, string[]>();
  for (const { from, to } of imports) {
    edges.set(from, [...(edges.get(from) ?? []), to]);
    if (!edges.has(to)) edges.set(to, []);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const part: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      part.push(w);
    } while (w !== v);
    if (part.length > 1 || edges.get(v)!.includes(v)) found.push(part.sort());
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return found;
}
