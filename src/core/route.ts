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
  const taken: RouteNode[] = [];
  walk(node, labels, taken);
  return taken;
}

/**
 * Appends to `taken` the nodes under `node` that take the labels; answers
 * whether `node` matched (a node that matches always takes them, itself or
 * through a child). One array for the whole walk: it runs on every arrival.
 */
function walk(node: RouteNode, labels: Labels, taken: RouteNode[]): boolean {
  if (!matchesAll(node.matchers, labels)) return false;
  const before = taken.length;
  for (const child of node.routes) {
    if (walk(child, labels, taken) && !child.continue) break;
  }
  if (taken.length === before) taken.push(node);
  return true;
}

/** The receivers a label set reaches, in tree order, a receiver once per node that took it (as `amtool config routes test` prints them). */
export const routeReceivers = (root: RouteNode, labels: Labels): string[] => matchRoute(root, labels).map((n) => n.receiver);
