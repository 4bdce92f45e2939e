/** The in-process app's base URL on 127.0.0.1, listening on a free port from its first use on. */
import type { AddressInfo } from 'node:net';
import type { TestContext } from './harness.js';

export async function baseUrl(ctx: TestContext): Promise<string> {
  if (!ctx.app.server.listening) await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = ctx.app.server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}
