import { z } from 'zod';
import { parseDuration } from '../core/duration.js';
import { parseMatcher } from '../core/matcher.js';
import type { RouteGrouping, RouteNode } from '../core/route.js';
import { ADAPTER_NAME } from './adapters.js';
import { matcherList } from './matchers.js';

/** How deep a routing tree may nest, and how many nodes it may have: a tree is walked for every create. */
export const ROUTE_MAX_DEPTH = 16;
export const ROUTE_MAX_NODES = 1000;

/** One node as written: Alertmanager's `route` shape, adapter names as receivers. */
export interface RouteInput {
  receiver?: string | undefined;
  matchers: string[];
  continue: boolean;
  routes: RouteInput[];
  group_by?: string[] | undefined;
  group_wait?: string | undefined;
  group_interval?: string | undefined;
  repeat_interval?: string | undefined;
  escalate?: EscalateInput[] | undefined;
}

/** One escalation step as written: after how long (since the step before, or the key's create), to which adapters. */
export interface EscalateInput {
  after: string;
  to: string[];
}

/** Escalation steps a route may have. */
export const MAX_ESCALATION_STEPS = 10;

/** Alertmanager's defaults for a route's timing, where neither it nor a route above sets them. */
export const ROUTE_TIMING_DEFAULTS = { group_wait: '30s', group_interval: '5m', repeat_interval: '4h' } as const;
/** The longest wait or interval a route may set: a group's notifications are held in the outbox that long. */
const MAX_ROUTE_DURATION_MS = 30 * 86_400_000;
const TIMINGS = ['group_wait', 'group_interval', 'repeat_interval'] as const;

const routeDuration = z.string().superRefine((text, ctx) => {
  try {
    if (parseDuration(text) > MAX_ROUTE_DURATION_MS) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(text)} is longer than 30 days` });
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
  }
});

/** `group_by`: label names, or `['...']` alone (group by every label: each distinct label set is its own group). */
const groupBy = z
  .array(z.string().regex(/^([A-Za-z_][A-Za-z0-9_]*|\.\.\.)$/, "must be a label name, or '...' for every label"))
  .max(16)
  .refine((by) => !by.includes('...') || by.length === 1, "'...' groups by every label: it stands alone")
  .refine((by) => new Set(by).size === by.length, 'names a label twice');

/** Visits every node depth first, with its config path and depth; `visit` answers false to skip a node's children. */
function walkRoute(
  n: RouteInput,
  path: Array<string | number>,
  visit: (n: RouteInput, path: Array<string | number>, depth: number) => boolean,
  depth = 0,
): void {
  if (!visit(n, path, depth)) return;
  for (const [i, c] of n.routes.entries()) walkRoute(c, [...path, 'routes', i], visit, depth + 1);
}

const node: z.ZodType<RouteInput, unknown> = z.lazy(() =>
  z.strictObject({
    receiver: z.string().regex(ADAPTER_NAME, 'must name an adapter').optional(),
    matchers: matcherList(0).default([]),
    continue: z.boolean().default(false),
    routes: z.array(node).max(ROUTE_MAX_NODES).default([]),
    group_by: groupBy.optional(),
    group_wait: routeDuration.optional(),
    group_interval: routeDuration.optional(),
    repeat_interval: routeDuration.optional(),
    escalate: z
      .array(z.strictObject({ after: routeDuration, to: z.array(z.string().regex(ADAPTER_NAME, 'must name an adapter')).min(1).max(16) }))
      .max(MAX_ESCALATION_STEPS)
      .optional(),
  }),
);

/**
 * Config `route:`: which adapters take a key's deliveries (docs/routing.md).
 * The root names a receiver and has no matchers; every receiver names a
 * configured adapter (checked with the adapters, in schema.ts).
 */
export const routeConfig = node
  .superRefine((root, ctx) => {
    if (!root.receiver)
      ctx.addIssue({ code: 'custom', path: ['receiver'], message: 'the root route must name a receiver (the adapter that takes what no other route takes)' });
    if (root.matchers.length > 0) ctx.addIssue({ code: 'custom', path: ['matchers'], message: 'the root route matches everything: it takes no matchers' });
    if (root.continue) ctx.addIssue({ code: 'custom', path: ['continue'], message: 'the root route has no siblings: continue does not apply' });
    let nodes = 0;
    const grouped = new Map<RouteInput, boolean>();
    walkRoute(root, [], (n, path, depth) => {
      nodes++;
      if (depth > ROUTE_MAX_DEPTH) {
        ctx.addIssue({ code: 'custom', path, message: `routes nest at most ${ROUTE_MAX_DEPTH} deep` });
        return false;
      }
      const parentGrouped = path.length === 0 ? false : (grouped.get(parentOf(root, path)) ?? false);
      const isGrouped = n.group_by !== undefined || parentGrouped;
      grouped.set(n, isGrouped);
      for (const t of TIMINGS)
        if (n[t] !== undefined && !isGrouped)
          ctx.addIssue({
            code: 'custom',
            path: [...path, t],
            message: `${t} applies to groups, and no group_by is set on this route or one above it: onceonly delivers each incident on its own unless a route groups them (group_by: [] groups everything the route takes, as in Alertmanager)`,
          });
      return true;
    });
    if (nodes > ROUTE_MAX_NODES)
      ctx.addIssue({ code: 'custom', path: [], message: `a routing tree has at most ${ROUTE_MAX_NODES} nodes (this one has ${nodes})` });
  })
  .optional();

/** The node at `path` (as walkRoute gives it) less its last step: the parent. */
function parentOf(root: RouteInput, path: Array<string | number>): RouteInput {
  let n = root;
  for (let i = 1; i < path.length - 2; i += 2) n = n.routes[path[i] as number]!;
  return n;
}

/** Every receiver a tree names, with the config path of its node. */
export function routeReceiversNamed(root: RouteInput): Array<{ receiver: string; path: Array<string | number> }> {
  const out: Array<{ receiver: string; path: Array<string | number> }> = [];
  walkRoute(root, ['route'], (n, path) => {
    if (n.receiver) out.push({ receiver: n.receiver, path: [...path, 'receiver'] });
    return true;
  });
  return out;
}

/** Every adapter a tree's escalation steps name, with its config path. */
export function routeEscalationTargets(root: RouteInput): Array<{ adapter: string; path: Array<string | number> }> {
  const out: Array<{ adapter: string; path: Array<string | number> }> = [];
  walkRoute(root, ['route'], (n, path) => {
    for (const [i, step] of (n.escalate ?? []).entries())
      for (const [j, adapter] of step.to.entries()) out.push({ adapter, path: [...path, 'escalate', i, 'to', j] });
    return true;
  });
  return out;
}

/** Every matcher a tree holds, with its config path. */
export function routeMatchersNamed(root: RouteInput): Array<{ matcher: string; path: Array<string | number> }> {
  const out: Array<{ matcher: string; path: Array<string | number> }> = [];
  walkRoute(root, ['route'], (n, path) => {
    for (const [i, matcher] of n.matchers.entries()) out.push({ matcher, path: [...path, 'matchers', i] });
    return true;
  });
  return out;
}

/**
 * The tree ready to evaluate: matchers compiled, each node's receiver
 * resolved (a node without one inherits its parent's), its escalation
 * (set on it or above; `escalate: []` ends an inherited one), and, under a
 * `group_by`, its grouping: the nearest `group_by` and timings set on it or
 * above, Alertmanager's defaults for timings set nowhere, and its id (the
 * path of matchers from the root, and its place among its siblings).
 */
export function compileRoute(root: RouteInput): RouteNode {
  const build = (n: RouteInput, up: { receiver: string; id: string; set: Partial<Omit<RouteInput, 'routes'>> }): RouteNode => {
    const receiver = n.receiver ?? up.receiver;
    const set = { ...up.set };
    for (const k of ['group_by', ...TIMINGS, 'escalate'] as const) if (n[k] !== undefined) (set as Record<string, unknown>)[k] = n[k];
    const id = up.id;
    const grouping: RouteGrouping | undefined = set.group_by
      ? {
          id,
          by: set.group_by[0] === '...' ? 'all' : set.group_by,
          waitMs: parseDuration(set.group_wait ?? ROUTE_TIMING_DEFAULTS.group_wait),
          intervalMs: parseDuration(set.group_interval ?? ROUTE_TIMING_DEFAULTS.group_interval),
          repeatMs: parseDuration(set.repeat_interval ?? ROUTE_TIMING_DEFAULTS.repeat_interval),
        }
      : undefined;
    const matchers = n.matchers.map((m) => parseMatcher(m));
    return {
      receiver,
      matchers,
      continue: n.continue,
      routes: n.routes.map((c, i) => build(c, { receiver, id: `${id}/{${c.matchers.join(',')}}/${i}`, set })),
      ...(grouping ? { grouping } : {}),
      ...(set.escalate && set.escalate.length > 0 ? { escalate: set.escalate.map((e) => ({ afterMs: parseDuration(e.after), to: e.to })) } : {}),
    };
  };
  return build(root, { receiver: root.receiver ?? '', id: '{}', set: {} });
}
