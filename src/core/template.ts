import { Liquid, type LiquidOptions, type Template, Tokenizer, TagToken } from 'liquidjs';

/**
 * Ticket field templates: Liquid (`{{ labels.team }}`, filters, `if`,
 * `for`), run by liquidjs with what a template may do bounded. A template
 * reads only the values it is handed, and of those only their own
 * properties (`constructor`, `__proto__` read as nothing); it reads no file
 * (the tags that would, `include`, `render`, `layout`, and `liquid`, which
 * could hold them, are refused when it is parsed); and each render is bounded
 * in time, in memory and in output. A value it inserts is text: a label
 * holding `{{ … }}` is printed as written, never run.
 */

/** The tags a template may use: logic and text, none that reads a file or nests tags in text. */
const TAGS = new Set([
  'assign',
  'capture',
  'endcapture',
  'case',
  'when',
  'else',
  'endcase',
  'if',
  'elsif',
  'endif',
  'unless',
  'endunless',
  'for',
  'endfor',
  'break',
  'continue',
  'cycle',
  'raw',
  'endraw',
  'comment',
  'endcomment',
  'echo',
  '#',
]);

/** Characters one rendered field may hold. */
export const MAX_RENDERED = 32 * 1024;

const engineOptions: LiquidOptions = {
  ownPropertyOnly: true,
  strictFilters: true,
  strictVariables: false,
  // A template is at most a few KiB of config; these bound what one render may cost.
  parseLimit: 64 * 1024,
  renderLimit: 50, // RENDER_MS, between nodes; boundFilters checks it inside a filter chain
  memoryLimit: 4 * 1024 * 1024,
  // No file is ever read: the tags that read files are refused at parse time, and the root is empty.
  root: [],
  partials: [],
  layouts: [],
  relativeReference: false,
};
/** How long one render may take (ms): liquidjs checks its renderLimit between nodes, this also inside a chain of filters. */
export const RENDER_MS = 50;
/** The longest text, and the most items, one filter may make: a chain's intermediate values are bounded as its output is. */
export const MAX_FILTER_CHARS = 256 * 1024;
export const MAX_FILTER_ITEMS = 10_000;

/** When the render under way must end (performance.now()); Infinity outside a render. Renders are synchronous: one at a time. */
let renderDeadline = Number.POSITIVE_INFINITY;

/**
 * Wraps every filter of `engine` so that each call first checks the render's
 * deadline and then the size of what it made. liquidjs checks its time limit
 * only between template nodes, so one output of many chained filters
 * (`| append | replace | …`, each multiplying a 4 KiB label) ran for a second
 * and succeeded; now the chain stops at the first filter past the deadline,
 * and no filter may make more than MAX_FILTER_CHARS or MAX_FILTER_ITEMS.
 */
function boundFilters(engine: Liquid): Liquid {
  for (const [name, impl] of Object.entries(engine.filters)) {
    const handler = typeof impl === 'function' ? impl : impl.handler;
    if (typeof handler !== 'function') continue;
    const bounded = function (this: unknown, ...args: unknown[]) {
      if (performance.now() > renderDeadline) throw new Error(`render limit exceeded: the filter ${name} ran past the ${RENDER_MS} ms a render may take`);
      const out = (handler as (...a: unknown[]) => unknown).apply(this, args);
      if (typeof out === 'string' && out.length > MAX_FILTER_CHARS)
        throw new Error(`the filter ${name} made ${out.length} characters; a filter makes at most ${MAX_FILTER_CHARS}`);
      if (Array.isArray(out) && out.length > MAX_FILTER_ITEMS)
        throw new Error(`the filter ${name} made ${out.length} items; a filter makes at most ${MAX_FILTER_ITEMS}`);
      return out;
    };
    engine.registerFilter(name, typeof impl === 'function' ? bounded : { ...impl, handler: bounded });
  }
  return engine;
}

const plain = boundFilters(new Liquid(engineOptions));
/** Engines whose `{{ … }}` output passes through an escape (a Slack message's &, < and >), by escape. */
const escaping = new Map<(s: string) => string, Liquid>();
const engineFor = (escapeValue?: (s: string) => string) => {
  if (!escapeValue) return plain;
  let e = escaping.get(escapeValue);
  if (!e) escaping.set(escapeValue, (e = boundFilters(new Liquid({ ...engineOptions, outputEscape: (v: unknown) => escapeValue(String(v)) }))));
  return e;
};

export class TemplateError extends Error {
  readonly code = 'template';
  constructor(
    message: string,
    /**
     * The render ran past its time. The limit is wall-clock time, so a
     * process paused mid-render (a long collection, a starved core) trips it
     * as a runaway loop does: worth another try, where every other failure
     * would fail the same way again.
     */
    readonly overTime = false,
  ) {
    super(message);
  }
}

export interface ParsedTemplate {
  readonly source: string;
  readonly parsed: Template[];
  readonly engine: Liquid;
}

/**
 * Parses a template, or throws TemplateError saying what is wrong (a tag not
 * allowed, a filter that does not exist, a syntax error). `escapeValue`: what
 * every value the template inserts passes through (its literal text does not).
 */
export function parseTemplate(source: string, escapeValue?: (s: string) => string): ParsedTemplate {
  try {
    for (const token of new Tokenizer(source).readTopLevelTokens()) {
      if (token instanceof TagToken && !TAGS.has(token.name)) throw new TemplateError(`the tag {% ${token.name} %} is not allowed in a field template`);
    }
    const engine = engineFor(escapeValue);
    return { source, parsed: engine.parse(source), engine };
  } catch (err) {
    if (err instanceof TemplateError) throw err;
    throw new TemplateError(firstLine(err));
  }
}

/**
 * Renders a parsed template over `values`; throws TemplateError when it fails
 * or its output is over MAX_RENDERED characters. Synchronous: no allowed tag
 * or filter waits on anything, and a render is a few microseconds, where
 * liquidjs's asynchronous one paid a promise per node.
 */
export function renderTemplate(t: ParsedTemplate, values: Record<string, unknown>): string {
  let out: string;
  renderDeadline = performance.now() + RENDER_MS;
  try {
    out = String(t.engine.renderSync(t.parsed, values));
  } catch (err) {
    const message = firstLine(err);
    throw new TemplateError(message, /render limit exceeded/.test(message));
  } finally {
    renderDeadline = Number.POSITIVE_INFINITY;
  }
  if (out.length > MAX_RENDERED) throw new TemplateError(`rendered ${out.length} characters; a field holds at most ${MAX_RENDERED}`);
  return out;
}

/** liquidjs's message names the line and column; only its first line is kept (what follows may quote the template). */
const firstLine = (err: unknown) =>
  String((err as Error)?.message ?? err)
    .split('\n')[0]!
    .slice(0, 300);
