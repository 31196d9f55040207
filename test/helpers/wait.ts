/**
 * Polls until `probe` gives a truthy value and returns it; throws after `ms`
 * with `what()` saying how far it got. For waiting on a real process or
 * worker; never a timing assertion.
 */
export async function until<T>(probe: () => T | Promise<T>, ms: number, what: () => string = () => ''): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms${what() ? `: ${what()}` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
