/** Deletes up to `batch` entries of `map` that `expired` says are past their lifetime; returns how many went. */
export function sweepMap<K, V>(map: Map<K, V>, batch: number, expired: (value: V) => boolean, also?: (key: K, value: V) => void): number {
  let n = 0;
  for (const [k, v] of map) {
    if (n >= batch) break;
    if (expired(v)) {
      map.delete(k);
      also?.(k, v);
      n++;
    }
  }
  return n;
}
