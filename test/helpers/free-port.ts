import { once } from 'node:events';
import { createServer } from 'node:net';

/** A free TCP port on loopback (bound, read, released). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as { port: number }).port;
  srv.close();
  await once(srv, 'close');
  return port;
}
