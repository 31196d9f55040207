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
  /** set under a `group_by`: the receiver takes the entries this node takes as groups */
  grouping?: RouteGrouping;
  /** the steps a key this node takes escalates through while nobody acknowledges it */
  escalate?: readonly EscalationStepSpec[];
}

/** One escalation step: `afterMs` after the step before it (the first: after the key's create), a create to `to`. */
export interface EscalationStepSpec {
  afterMs: number;
  to: readonly string[];
}

/**
 * A node's grouping, Alertmanager's route options: the entries it takes
 * that share the `by` labels' values are one group, whose first
 * notification waits `waitMs` after its first member, whose changes go out
 * at most every `intervalMs` (on ticks from the first), and which is sent
 * again unchanged after `repeatMs`.
 */
export interface RouteGrouping {
  /** the node's place in the tree: matchers from the root, and its index among its siblings */
  id: string;
  /** label names, or every label */
  by: readonly string[] | 'all';
  waitMs: number;
  intervalMs: number;
  repeatMs: number;
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

/**
 * A group's ticks: its first notification `waitMs` after it was made, then
 * one every `intervalMs` (Alertmanager's aggregation group timer). Answers
 * the first tick at or after `t`: when a change made at `t` goes out.
 */
export function tickAtOrAfter(createdAt: number, waitMs: number, intervalMs: number, t: number): number {
  const first = createdAt + waitMs;
  return t <= first ? first : first + Math.ceil((t - first) / intervalMs) * intervalMs;
}
