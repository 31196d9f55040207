import { z } from 'zod';
import { parseMatcher } from '../core/matcher.js';
import type { RouteNode } from '../core/route.js';
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
}

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
    walkRoute(root, [], (_n, path, depth) => {
      nodes++;
      if (depth <= ROUTE_MAX_DEPTH) return true;
      ctx.addIssue({ code: 'custom', path, message: `routes nest at most ${ROUTE_MAX_DEPTH} deep` });
      return false;
    });
    if (nodes > ROUTE_MAX_NODES)
      ctx.addIssue({ code: 'custom', path: [], message: `a routing tree has at most ${ROUTE_MAX_NODES} nodes (this one has ${nodes})` });
  })
  .optional();

/** Every receiver a tree names, with the config path of its node. */
export function routeReceiversNamed(root: RouteInput): Array<{ receiver: string; path: Array<string | number> }> {
  const out: Array<{ receiver: string; path: Array<string | number> }> = [];
  walkRoute(root, ['route'], (n, path) => {
    if (n.receiver) out.push({ receiver: n.receiver, path: [...path, 'receiver'] });
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

/** The tree ready to evaluate: matchers compiled, each node's receiver resolved (a node without one inherits its parent's). */
export function compileRoute(root: RouteInput): RouteNode {
  const build = (n: RouteInput, inherited: string): RouteNode => {
    const receiver = n.receiver ?? inherited;
    return { receiver, matchers: n.matchers.map((m) => parseMatcher(m)), continue: n.continue, routes: n.routes.map((c) => build(c, receiver)) };
  };
  return build(root, root.receiver ?? '');
}
