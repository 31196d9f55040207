import type { Config } from '../config/schema.js';
import { compileRoute } from '../config/route.js';
import type { Labels } from '../core/matcher.js';
import type { OutboxKind } from '../core/outbox.js';
import { type RouteNode, routeReceivers } from '../core/route.js';
import { labelsOf } from '../mute/labels.js';

/** Compiled once per config in force (a reload makes a new config object). */
const trees = new WeakMap<object, RouteNode>();

/** The routing tree of `config`, compiled; null when it has none. */
function treeOf(config: Config): RouteNode | null {
  if (!config.route) return null;
  let tree = trees.get(config.route);
  if (!tree) trees.set(config.route, (tree = compileRoute(config.route)));
  return tree;
}

/**
 * The adapters a label set reaches under `config`, in the order `amtool
 * config routes test` prints receivers (an adapter twice when two nodes take
 * it): the routing tree's answer, or every adapter when there is no tree.
 */
export function reachedAdapters(config: Config, labels: Labels): string[] {
  const tree = treeOf(config);
  return tree ? routeReceivers(tree, labels) : config.adapters.map((a) => a.name);
}

/** What an entry is routed by: its kind, store key, severity and data, as silences match them. */
export interface Routable {
  kind: OutboxKind;
  key: string;
  severity: string;
  data: Record<string, unknown>;
}

/**
 * Where a new key's entries go: the adapters the tree reaches with the
 * entry's labels and its tenant (the caller's, whatever label of that name
 * the producer sent), each once; undefined when the config has no tree
 * (every adapter takes it). Decided at the create and kept with the key.
 */
export function routeOf(config: Config, tenant: string, entry: Routable): string[] | undefined {
  const tree = treeOf(config);
  if (!tree) return undefined;
  // labelsOf builds a fresh object: the tenant is set on it rather than copied into another.
  const labels = labelsOf(entry) as Record<string, string>;
  labels.tenant = tenant;
  const reached = routeReceivers(tree, labels);
  return reached.length > 1 ? [...new Set(reached)] : reached;
}
