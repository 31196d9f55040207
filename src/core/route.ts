import { type CompiledMatcher, type Labels, matchesAll } from './matcher.js';

/**
 * Alertmanager's routing tree, with adapter names as receivers. A node that
 * names no receiver inherits its parent's, as in Alertmanager.
 */
export interface RouteNode {
  receiver: string;
  matchers: readonly CompiledMatcher[];
  continue: boolean;
  routes: readonly RouteNode[];
}

/**
 * The nodes a label set reaches, evaluated exactly as Alertmanager's
 * dispatcher does: a node matches when all its matchers match; its children
 * are tried in order, depth first, and the first that matches takes the
 * labels unless it has `continue`, in which case the next matching siblings
 * take them too; a node none of whose children match takes them itself.
 */
export function matchRoute(node: RouteNode, labels: Labels): RouteNode[] {
  if (!matchesAll(node.matchers, labels)) return [];
  const all: RouteNode[] = [];
  for (const child of node.routes) {
    const taken = matchRoute(child, labels);
    all.push(...taken);
    if (taken.length > 0 && !child.continue) break;
  }
  return all.length > 0 ? all : [node];
}

/** The receivers a label set reaches, in tree order, a receiver once per node that took it (as `amtool config routes test` prints them). */
export const routeReceivers = (root: RouteNode, labels: Labels): string[] => matchRoute(root, labels).map((n) => n.receiver);
