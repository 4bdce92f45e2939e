/**
 * The `/mcp` routes, registered at start-up without loading MCP itself: the MCP SDK (with zod),
 * the tool table and the task hub load on the first request to `/mcp`, before it is answered
 * (routes.ts), so a service that no agent talks to never holds them in memory.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { errorBody } from '../http/error-handler.js';
import { jsonBodyParser } from '../http/json-body.js';
import { prototypeKeys } from './prototype-keys.js';
import type { McpHandlers } from './routes.js';

/** `root` is the app built by buildApp (its routes become the tools). */
export async function mcpEndpoint(app: FastifyInstance, deps: Deps, root: FastifyInstance): Promise<void> {
  let loading: Promise<McpHandlers> | undefined;
  let loaded: McpHandlers | undefined;
  const handlers = () =>
    (loading ??= import('./routes.js').then((mcp) => (loaded = mcp.mcpHandlers(deps, root))).catch((err: unknown) => {
      loading = undefined; // a failed load is tried again by the next request
      throw err;
    }));

  // A JSON body holding a "__proto__" key, or a "constructor" key with "prototype", is refused
  // whole on REST (400 INVALID_REQUEST). Here it is read without those keys and marked, so a
  // tool call in it gets the tool error an argument outside the schema gets (the same code and
  // status as the REST route's answer) instead of an answer that is not JSON-RPC.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    jsonBodyParser(app, (request, cleaned) => {
      prototypeKeys.add(request);
      return { value: cleaned };
    }),
  );

  const meta = { code: 'MCP', message: 'MCP', auth: 'none' } as const;
  app.post('/mcp', { config: { meta } }, async (request, reply) => (await handlers()).post(request, reply));
  // The standing stream of task status notifications. A HEAD twin would open a stream for a
  // response without a body.
  app.get('/mcp', { exposeHeadRoute: false, config: { meta } }, async (request, reply) => (await handlers()).openStream(request, reply));
  // No session to end (DELETE), no body to a HEAD.
  const notAllowed = (request: FastifyRequest, reply: FastifyReply) =>
    reply.status(405).header('Allow', 'GET, POST').send(errorBody(request, 'INVALID_REQUEST', 'The MCP endpoint has no sessions: send JSON-RPC messages with POST, and open the task status stream with GET.'));
  app.head('/mcp', { config: { meta } }, notAllowed);
  app.delete('/mcp', { config: { meta } }, notAllowed);

  deps.metrics.trackOpenTaskStreams(() => loaded?.hub.size ?? 0);
  app.addHook('preClose', async () => {
    if (loading) await (await loading.catch(() => undefined))?.hub.closeAll();
  });
}

