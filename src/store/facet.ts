/**
 * What the store decorators (fail-open, instrumentation) are built on: a
 * facet wrapped whole, every method through one function, so adding an
 * operation to a facet needs no edit in any decorator.
 */

/** Every method name of an object: its own and its class chain's, up to Object. */
export function methodNames(obj: object): string[] {
  const names = new Set<string>();
  for (let p: object | null = obj; p && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
    for (const name of Object.getOwnPropertyNames(p)) {
      if (name === 'constructor' || names.has(name)) continue;
      const d = Object.getOwnPropertyDescriptor(p, name);
      if (d && typeof d.value === 'function') names.add(name);
    }
  }
  return [...names];
}

/**
 * Methods whose callers rely on a synchronous answer (a store's step that
 * never waits). An `Around` answers with a promise, so a wrapped facet leaves
 * these out and its caller takes the asynchronous form.
 */
const SYNCHRONOUS = new Set(['decideNow']);

/** Runs one call of `method` with its arguments; returns what the caller gets. */
export type Around = (method: string, call: () => Promise<unknown>, args: unknown[]) => Promise<unknown>;

/**
 * A facet whose every method (of the `methods` named, by default all the
 * facet has) runs through `around`. Built once, as a plain object of bound
 * functions: no Proxy on the decision path.
 */
export function wrapFacet<T extends object>(facet: T, around: Around, methods: readonly string[] = methodNames(facet)): T {
  const wrapped: Record<string, unknown> = {};
  const source = facet as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const name of methods) {
    const fn = source[name];
    if (typeof fn !== 'function' || SYNCHRONOUS.has(name)) continue;
    wrapped[name] = (...args: unknown[]) => around(name, () => fn.apply(facet, args), args);
  }
  return wrapped as T;
}
