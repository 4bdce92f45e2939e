/**
 * A free TCP port on 127.0.0.1, for a server whose address must be known before it starts (the
 * built server's PORT, the console's PUBLIC_BASE_URL). The port is free when this returns; the
 * caller binds it right away.
 */
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}
