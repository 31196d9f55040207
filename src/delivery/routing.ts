import type { Config } from '../config/schema.js';
import { compileRoute } from '../config/route.js';
import { labelValue, type Labels } from '../core/matcher.js';
import type { OutboxKind } from '../core/outbox.js';
import { type EscalationStepSpec, matchRoute, type RouteNode, routeReceivers } from '../core/route.js';
import { labelsOf } from '../inputs/labels.js';
import { GROUP_LINE } from './gate/group-stage.js';

/** A compiled tree, the routes it has answered (each kept once), and its answers by the values it reads. */
interface Tree {
  root: RouteNode;
  routes: Map<string, readonly string[]>;
  /** the label names its matchers read: its answer depends on their values alone */
  names: readonly string[];
  /** answers by those values (length-prefixed, joined); cleared when full */
  answers: Map<string, Answer>;
  /** whether a node groups (a `group_by` in the tree) */
  groups: boolean;
  /** the shortest group_interval of a grouping node (Infinity: none groups) */
  shortestInterval: number;
  /** whether a node escalates */
  escalates: boolean;
}

/** What a label set reaches: every receiver; those that take it on its own (not as a group); the grouping nodes that take it. */
interface Answer {
  all: readonly string[];
  single: readonly string[];
  grouping: readonly RouteNode[];
  /** the escalation of the first node that takes it and has one (none: empty) */
  escalate: readonly EscalationStepSpec[];
}
/** Compiled once per config in force (a reload makes a new config object). */
const trees = new WeakMap<object, Tree>();
/**
 * Distinct routes a tree keeps shared. Every live key holds its route: one
 * array per distinct answer instead of one per key keeps a million keys from
 * holding a million copies (and the collector from walking them). Past this,
 * new answers are not kept shared (a tree with more distinct answers is rare).
 */
const SHARED_ROUTES = 1024;
/**
 * Answers a tree remembers by the values its matchers read. Arrivals repeat
 * (re-fires, a storm's many keys with one region and team), and a walk of
 * a large tree costs more than the lookup. Bounded in count and, below, in
 * the size of a key; a full memory is dropped, not grown.
 */
const REMEMBERED = 4096;
const REMEMBERED_KEY_CHARS = 1024;

/** The label names a tree's matchers read. */
function namesOf(node: RouteNode, into = new Set<string>()): Set<string> {
  for (const m of node.matchers) into.add(m.name);
  for (const child of node.routes) namesOf(child, into);
  return into;
}

/** Whether `n` or a node under it is as `p` asks. */
const anyNode = (n: RouteNode, p: (n: RouteNode) => boolean): boolean => p(n) || n.routes.some((c) => anyNode(c, p));
const shortestInterval = (n: RouteNode): number => Math.min(n.grouping?.intervalMs ?? Infinity, ...n.routes.map(shortestInterval));

/** The routing tree of `config`, compiled; null when it has none. */
function treeOf(config: Config): Tree | null {
  if (!config.route) return null;
  let tree = trees.get(config.route);
  if (!tree) {
    const root = compileRoute(config.route);
    trees.set(
      config.route,
      (tree = {
        root,
        routes: new Map(),
        names: [...namesOf(root)],
        answers: new Map(),
        groups: anyNode(root, (n) => n.grouping !== undefined),
        shortestInterval: shortestInterval(root),
        escalates: anyNode(root, (n) => n.escalate !== undefined),
      }),
    );
  }
  return tree;
}

/**
 * The adapters a label set reaches under `config`, in the order `amtool
 * config routes test` prints receivers (an adapter twice when two nodes take
 * it): the routing tree's answer, or every adapter when there is no tree.
 * `labels` are the labels live routing matches (`labelsOf`, or `labelsAsSent`
 * for a label set a person gives).
 */
export function reachedAdapters(config: Config, labels: Labels): string[] {
  const tree = treeOf(config);
  return tree ? routeReceivers(tree.root, labels) : config.adapters.map((a) => a.name);
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
export function routeOf(config: Config, tenant: string, entry: Routable): readonly string[] | undefined {
  const tree = treeOf(config);
  if (!tree) return undefined;
  const a = answer(tree, labelsOf({ ...entry, tenant }));
  // A grouping route takes an incident as part of its group: the incident itself goes only to the routes
  // that take it alone, and, when there are none, to its groups alone (the group line, which every entry reaches).
  if (entry.kind !== 'incident' || !tree.groups) return a.all;
  return a.single.length > 0 ? a.single : ONLY_GROUPS;
}

/** The route of an incident only grouping routes take: no adapter, only the group line. */
const ONLY_GROUPS: readonly string[] = Object.freeze([GROUP_LINE]);

/** Whether `config`'s routing tree groups (a route sets `group_by`). */
export const routeGroups = (config: Config): boolean => treeOf(config)?.groups ?? false;

/** The shortest group_interval among `config`'s grouping routes; Infinity when none groups. */
export const shortestGroupInterval = (config: Config): number => treeOf(config)?.shortestInterval ?? Infinity;

/** Whether `config`'s routing tree escalates (a route sets `escalate`). */
export const routeEscalates = (config: Config): boolean => treeOf(config)?.escalates ?? false;

/** The escalation steps of an incident under `config`: those of the first route that takes it and has some (none without a tree). */
export const escalationOf = (config: Config, tenant: string, entry: Routable): readonly EscalationStepSpec[] =>
  routeEscalates(config) ? reachedEscalation(config, labelsOf({ ...entry, tenant })) : [];

/** The escalation steps a label set (as `reachedAdapters` takes it) would escalate through under `config`. */
export function reachedEscalation(config: Config, labels: Labels): readonly EscalationStepSpec[] {
  const tree = treeOf(config);
  return tree?.escalates ? answer(tree, labels).escalate : [];
}

/** The grouping nodes an incident's labels reach under `config`, in tree order (none without a tree). */
export function groupingNodesOf(config: Config, tenant: string, entry: Routable): readonly RouteNode[] {
  const tree = treeOf(config);
  return tree?.groups ? answer(tree, labelsOf({ ...entry, tenant })).grouping : [];
}

/**
 * The tree's answer for `labels` (the caller's tenant set by labelsOf after
 * everything the producer sent), remembered by the values its matchers read.
 */
function answer(tree: Tree, labels: Labels): Answer {
  // Length-prefixed, so no two value lists make one key.
  let key = '';
  for (const name of tree.names) {
    const v = labelValue(labels, name);
    key += `${v.length}:${v}`;
  }
  const known = tree.answers.get(key);
  if (known) return known;
  const nodes = matchRoute(tree.root, labels);
  const a: Answer = {
    all: shared(
      tree,
      nodes.map((n) => n.receiver),
    ),
    single: shared(
      tree,
      nodes.filter((n) => !n.grouping).map((n) => n.receiver),
    ),
    grouping: nodes.filter((n) => n.grouping),
    escalate: nodes.find((n) => n.escalate)?.escalate ?? [],
  };
  if (key.length <= REMEMBERED_KEY_CHARS) {
    if (tree.answers.size >= REMEMBERED) tree.answers.clear();
    tree.answers.set(key, a);
  }
  return a;
}

/** One array per distinct answer of a tree, deduplicated (an adapter once, in the order first reached). */
function shared(tree: Tree, reached: string[]): readonly string[] {
  const id = reached.join(',');
  const kept = tree.routes.get(id);
  if (kept) return kept;
  const route = Object.freeze(reached.length > 1 ? [...new Set(reached)] : reached);
  if (tree.routes.size < SHARED_ROUTES) tree.routes.set(id, route);
  return route;
}
