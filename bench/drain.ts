import type { deliveryHarness } from '../test/helpers/delivery.js';

type Harness = ReturnType<typeof deliveryHarness>;

/**
 * Drains a delivery harness until `expected` deliveries were made, moving its
 * clock past the backoff of a field render the process paused past its time
 * limit (retried, not lost: a busy machine does this now and then). Throws on
 * anything else that did not deliver. Answers the deliveries made.
 */
export async function drainDelivered(h: Harness, expected: number): Promise<number> {
  await h.drain();
  const delivered = () => h.settled.filter((x) => x.outcome === 'delivered').length;
  for (let i = 0; i < 20 && delivered() < expected && h.settled.some((x) => x.outcome === 'retried'); i++) {
    h.clock.advance(60_000);
    await h.drain();
  }
  const wrong = h.settled.find((x) => x.outcome !== 'delivered' && !(x.outcome === 'retried' && x.reason === 'render'));
  if (wrong) throw new Error(`a delivery went wrong: ${JSON.stringify(wrong)}`);
  if (delivered() !== expected) throw new Error(`${delivered()} deliveries for ${expected} creates`);
  return delivered();
}
