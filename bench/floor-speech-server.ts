/**
 * The floor of (s): the least a server on this stack can do to give the caller of a speech job
 * the same things the service gives, by the same three exchanges. One Fastify process:
 *
 *   POST /v1/runs               the presented key hashed (lib/crypto.ts sha256Hex, as keys are
 *                               stored) and looked up in a Map, the body parsed, 202 with a job id;
 *                               then espeak-ng spawned with the engine's own arguments (espeakArgs),
 *                               the text on stdin, its WAV read whole from stdout, the true sizes
 *                               written into its header (the engine's fixWavHeader) and its SHA-256
 *                               taken (the output's `sha256`, which callers verify);
 *   GET /v1/jobs/{id}/stream    the job's snapshot as an SSE `job` event the moment it completes;
 *   GET /floor-files/{id}       the WAV, from memory (once: it is dropped as it is served).
 *
 * Nothing else: no database (so no idempotency, points, credit hold, job row or settlement), no
 * durable write of the result (no file, no fsync), no content check, no work directory, no
 * request line, no metrics. A service that keeps the contract does all of those, so none can be
 * faster than this; the ratio of this server to espeak-ng run directly is the part of (s) that
 * belongs to the machine (spawning, pipes, hashing and moving 2.4 MB over HTTP), not to the
 * service.
 *
 * Environment: FLOOR_OPEN_KEY (the key it accepts), FLOOR_ESPEAK_PATH, FLOOR_PER_THOUSAND (price
 * in millicents per 1,000 characters, for the snapshot's cost). Listens on 127.0.0.1:PORT.
 */
import { spawn } from 'node:child_process';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { sha256Hex } from '../src/lib/crypto.js';
import { newId } from '../src/lib/ids.js';
import { espeakArgs, fixWavHeader, PITCH, RATE } from '../src/providers/local/espeak.js';

const keyHash = sha256Hex(process.env.FLOOR_OPEN_KEY ?? '');
const espeakPath = process.env.FLOOR_ESPEAK_PATH ?? 'espeak-ng';
const perThousand = Number(process.env.FLOOR_PER_THOUSAND ?? 0);

interface FloorJob {
  snapshot: Record<string, unknown>;
  done: boolean;
  waiting: FastifyReply[];
}
const jobs = new Map<string, FloorJob>();
const files = new Map<string, Buffer>();

const app = Fastify({ logger: false, genReqId: () => newId() });

function authenticated(request: FastifyRequest, reply: FastifyReply): boolean {
  reply.header('X-Request-Id', request.id);
  const header = request.headers.authorization;
  if (sha256Hex(typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : '') === keyHash) return true;
  reply.code(401).send({ success: false, code: 'UNAUTHENTICATED', message: 'A valid API key is required in the Authorization header.', requestId: request.id });
  return false;
}

const event = (snapshot: unknown) => `event: job\ndata: ${JSON.stringify(snapshot)}\n\n`;

function settle(id: string, job: FloorJob, snapshot: Record<string, unknown>): void {
  job.snapshot = snapshot;
  job.done = true;
  for (const reply of job.waiting.splice(0)) reply.raw.end(event(snapshot));
}

/** espeak-ng run as the engine runs it; the WAV fixed, hashed and kept in memory. */
function synthesize(id: string, job: FloorJob, text: string, voice: string, rate: number, pitch: number): void {
  const child = spawn(espeakPath, espeakArgs(voice, rate, pitch), { stdio: ['pipe', 'pipe', 'ignore'] });
  const out: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.on('error', () => settle(id, job, { ...job.snapshot, status: 'failed', errorCode: 'PROVIDER_ERROR' }));
  child.on('close', (code) => {
    if (code !== 0) return settle(id, job, { ...job.snapshot, status: 'failed', errorCode: 'PROVIDER_ERROR' });
    const wav = fixWavHeader(Buffer.concat(out));
    const sha256 = sha256Hex(wav.bytes);
    files.set(id, wav.bytes);
    const characters = [...text].length;
    settle(id, job, {
      ...job.snapshot,
      status: 'completed',
      costMillicents: Math.ceil((perThousand * characters) / 1000),
      output: { audio: { url: `/floor-files/${id}`, mimeType: 'audio/wav', sizeBytes: wav.bytes.length, sha256 }, format: 'wav', characters, durationSeconds: wav.seconds },
    });
  });
  child.stdin.end(text);
}

app.post<{ Body: { operationId?: unknown; input?: { text?: unknown; voice?: unknown; rate?: unknown; pitch?: unknown } } }>('/v1/runs', (request, reply) => {
  if (!authenticated(request, reply)) return;
  const input = request.body?.input;
  if (request.body?.operationId !== 'speech.generate' || typeof input?.text !== 'string') {
    reply.code(400).send({ success: false, code: 'INVALID_INPUT', message: 'speech.generate with a text is all this server runs.', requestId: request.id });
    return;
  }
  const id = newId();
  const job: FloorJob = { snapshot: { id, operationId: 'speech.generate', status: 'running' }, done: false, waiting: [] };
  jobs.set(id, job);
  reply.code(202).send({ success: true, code: 'PUBLIC_RUN_CREATE', message: 'Run accepted.', data: { jobId: id, status: 'queued' } });
  const voice = typeof input.voice === 'string' ? input.voice : 'en-us';
  const rate = typeof input.rate === 'number' ? input.rate : RATE.default;
  const pitch = typeof input.pitch === 'number' ? input.pitch : PITCH.default;
  synthesize(id, job, input.text, voice, rate, pitch);
});

app.get<{ Params: { id: string } }>('/v1/jobs/:id/stream', (request, reply) => {
  if (!authenticated(request, reply)) return;
  const job = jobs.get(request.params.id);
  if (!job) {
    reply.code(404).send({ success: false, code: 'NOT_FOUND', message: 'Not found.', requestId: request.id });
    return;
  }
  reply.hijack();
  reply.raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', 'x-request-id': request.id });
  if (job.done) reply.raw.end(event(job.snapshot));
  else job.waiting.push(reply);
});

app.get<{ Params: { id: string } }>('/floor-files/:id', (request, reply) => {
  const bytes = files.get(request.params.id);
  if (!bytes) {
    reply.code(404).send({ success: false, code: 'NOT_FOUND', message: 'Not found.', requestId: request.id });
    return;
  }
  files.delete(request.params.id);
  reply.header('content-type', 'audio/wav').header('content-length', String(bytes.length)).send(bytes);
});

app.get('/readyz', async () => ({ ok: true }));

await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
const stop = () => void app.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
