/**
 * GET /v1/jobs/{jobId}/stream: server-sent job updates (workspaces with a stream limit: Pro).
 *
 * Every refusal happens before the response starts, so it is the usual JSON error envelope;
 * then the reply is hijacked and the stream writes `event: job` frames (id = job version, data =
 * job snapshot), `event: gap` when the stored history cannot cover a Last-Event-ID, and
 * `: keep-alive` comments. A client that resumes with the terminal version's id gets 204 No
 * Content, which tells EventSource clients to stop reconnecting.
 */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.js';
import { requireAuth } from '../../http/auth-hook.js';
import { AppError } from '../../http/errors.js';
import { IdParams, WorkspaceHeaders } from '../../http/schemas.js';
import { JobStream, StreamHub } from './stream-hub.js';
import { acceptsEventStream, acquireSlot, parseLastEventId, requireStreamJob, requireStreamsAllowed, streamsLimited } from './stream-service.js';
import { isTerminal } from './states.js';
import { SseWriter } from './stream-writer.js';

const StreamHeaders = Type.Intersect([
  WorkspaceHeaders,
  Type.Object({
    accept: Type.Optional(Type.String({ description: 'Must accept `text/event-stream` (400 INVALID_REQUEST otherwise).' })),
    'last-event-id': Type.Optional(Type.String({ description: 'Resume after this job version: every later stored version is sent, or `event: gap` and the current snapshot.' })),
  }),
]);

const STREAM_DESCRIPTION = [
  'Server-sent events (`text/event-stream`). Frames: `event: job` with `id: <job version>` and `data: <job snapshot JSON>` ',
  '(first the current snapshot, then one frame per change, in order; older versions resent on resume carry `output: {}`); ',
  '`event: gap` with `data: {"jobId","lastEventId"}` when the history after Last-Event-ID is gone, followed by the current snapshot; ',
  '`: keep-alive` comments every 15 s. The stream closes after the terminal status (completed, failed, cancelled), ',
  'when the key loses access, and on server shutdown. Workspaces without streams: 403 PLAN_REQUIRED; ',
  "more open streams than the plan allows: 429 CONCURRENCY_LIMITED (details.limit STREAMS).",
].join('');

export async function streamRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  const hub = new StreamHub(deps, deps.streamSettings);
  deps.metrics.trackOpenStreams(() => hub.size);
  app.addHook('preClose', async () => hub.closeAll());

  app.get<{ Params: { jobId: string } }>(
    '/v1/jobs/:jobId/stream',
    {
      // A HEAD twin would run the handler and hold a stream slot for a response without a body.
      exposeHeadRoute: false,
      schema: {
        tags: ['jobs'],
        summary: 'Job updates as server-sent events (Pro plan)',
        description: STREAM_DESCRIPTION,
        headers: StreamHeaders,
        params: IdParams('jobId'),
        response: {
          200: { description: 'The event stream.', content: { 'text/event-stream': { schema: Type.String() } } },
          204: { description: 'Last-Event-ID is the job’s terminal version: nothing more will come (EventSource stops reconnecting).', type: 'null' },
        },
      },
      config: { meta: { code: 'PUBLIC_JOBS_STREAM', message: 'Job stream opened.', auth: 'key', scope: 'jobs:read', points: 3 } },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      if (!acceptsEventStream(request.headers.accept)) {
        throw new AppError('INVALID_REQUEST', { message: 'This endpoint streams server-sent events: send `Accept: text/event-stream`.' });
      }
      const lastEventId = parseLastEventId(request.headers['last-event-id']);
      requireStreamsAllowed(auth.workspace);
      const row = await requireStreamJob(deps, auth.workspace.id, request.params.jobId);
      if (lastEventId === Number(row.version) && isTerminal(row.status)) return reply.status(204).send();
      if (hub.closing) throw new AppError('UNAVAILABLE', { message: 'The server is shutting down; retry the request.', retryAfter: 1 });

      const settings = hub.settings;
      // The process's own cap first: streams hold a connection and timers each.
      if (!hub.reserve(deps.config.streamsPerProcess)) throw streamsLimited('service', hub.load, deps.config.streamsPerProcess, deps.clock.now());
      let slotId: string;
      try {
        slotId = await acquireSlot(deps, { workspace: auth.workspace, keyId: auth.key.id, jobId: row.id, ttlMs: settings.slotTtlMs });
      } finally {
        // Added to the hub below in the same turn, so the stream keeps counting.
        hub.opened();
      }
      const writer = new SseWriter(reply.raw, settings.maxBufferedBytes);
      const stream = new JobStream(deps, hub, {
        auth,
        credentials: { authorization: request.headers.authorization, workspaceHeader: request.headers['x-service-workspace'], ip: request.ip },
        jobId: row.id,
        slotId,
        lastEventId,
        writer,
        log: request.log,
      });
      hub.add(stream);
      reply.raw.on('close', () => stream.end('client'));
      reply.raw.on('error', () => stream.end('client'));
      // A client that went away while the request waited (auth, the job read, the slot's
      // transaction) closed the response before these listeners existed: its 'close' is not
      // coming again, and the slot would stay taken until a keep-alive write failed.
      if (reply.raw.destroyed || request.raw.destroyed) stream.end('client');
      try {
        await stream.subscribe();
      } catch (err) {
        stream.end('error');
        throw err;
      }
      if (hub.closing) {
        stream.end('shutdown');
        throw new AppError('UNAVAILABLE', { message: 'The server is shutting down; retry the request.', retryAfter: 1 });
      }
      if (stream.isEnded) {
        // The client went away while the stream was being set up; nothing to answer.
        reply.hijack();
        return reply;
      }
      reply.hijack();
      writer.open(reply.getHeaders());
      stream.run();
      return reply;
    },
  );
}
