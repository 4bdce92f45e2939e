/**
 * The floor of (s): the least a server on this stack can do to give the caller of a speech job
 * the same things the service gives, by the same three exchanges. One Fastify process:
 *
 *   POST /v1/runs               the presented key hashed (lib/crypto.ts sha256Hex, as keys are
 *                               stored) and looked up in a Map, the body parsed, 202 with a job id;
 *                               then espeak-ng spawned with the engine's own arguments (espeakArgs),
 *                               the text on stdin, its WAV read whole from stdout, the true sizes
 *                               written into its header (as the engine's fixWavHeader does, in the
 *                               first chunk: the pipe's chunks are never joined) and its SHA-256
 *                               taken (the output's `sha256`, which callers verify);
 *   GET /v1/jobs/{id}/stream    the job's snapshot as an SSE `job` event the moment it completes;
 *   GET /floor-files/{id}       the WAV, from memory, chunk by chunk (once: it is dropped as it
 *                               is served).
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
import { createHash } from 'node:crypto';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { sha256Hex } from '../src/lib/crypto.js';
import { newId } from '../src/lib/ids.js';
import { espeakArgs, PITCH, RATE } from '../src/providers/local/espeak.js';

const keyHash = sha256Hex(process.env.FLOOR_OPEN_KEY ?? '');
const espeakPath = process.env.FLOOR_ESPEAK_PATH ?? 'espeak-ng';
const perThousand = Number(process.env.FLOOR_PER_THOUSAND ?? 0);

interface FloorJob {
  snapshot: Record<string, unknown>;
  done: boolean;
  waiting: FastifyReply[];
}
const jobs = new Map<string, FloorJob>();
const files = new Map<string, Buffer[]>();

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

/**
 * The engine's header fix (fixWavHeader) made in the first chunk, where espeak-ng's canonical
 * 44-byte header lies (RIFF, WAVE, a PCM `fmt ` chunk, then `data`), without joining the chunks.
 */
function fixInPlace(chunks: Buffer[]): { bytes: number; seconds: number } | undefined {
  const head = chunks[0];
  const total = chunks.reduce((n, c) => n + c.length, 0);
  if (!head || head.length < 44) return undefined;
  const canonical = head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 16) === 'WAVEfmt ' && head.readUInt16LE(20) === 1 && head.toString('latin1', 36, 40) === 'data';
  const blockAlign = head.readUInt16LE(32);
  if (!canonical || blockAlign === 0 || total === 44 || (total - 44) % blockAlign !== 0) return undefined;
  head.writeUInt32LE(total - 8, 4);
  head.writeUInt32LE(total - 44, 40);
  return { bytes: total, seconds: Math.round(((total - 44) / head.readUInt32LE(28)) * 1000) / 1000 };
}

/** espeak-ng run as the engine runs it; the WAV fixed, hashed and kept in memory. */
function synthesize(id: string, job: FloorJob, text: string, voice: string, rate: number, pitch: number): void {
  const child = spawn(espeakPath, espeakArgs(voice, rate, pitch), { stdio: ['pipe', 'pipe', 'ignore'] });
  const out: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.on('error', () => settle(id, job, { ...job.snapshot, status: 'failed', errorCode: 'PROVIDER_ERROR' }));
  child.on('close', (code) => {
    const wav = code === 0 ? fixInPlace(out) : undefined;
    if (!wav) return settle(id, job, { ...job.snapshot, status: 'failed', errorCode: 'PROVIDER_ERROR' });
    // Hashed chunk by chunk and kept as chunks: not even the join of the pipe's chunks is made.
    const hash = createHash('sha256');
    for (const chunk of out) hash.update(chunk);
    const sha256 = hash.digest('hex');
    files.set(id, out);
    const characters = [...text].length;
    settle(id, job, {
      ...job.snapshot,
      status: 'completed',
      costMillicents: Math.ceil((perThousand * characters) / 1000),
      output: { audio: { url: `/floor-files/${id}`, mimeType: 'audio/wav', sizeBytes: wav.bytes, sha256 }, format: 'wav', characters, durationSeconds: wav.seconds },
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
  const chunks = files.get(request.params.id);
  if (!chunks) {
    reply.code(404).send({ success: false, code: 'NOT_FOUND', message: 'Not found.', requestId: request.id });
    return;
  }
  files.delete(request.params.id);
  reply.hijack();
  reply.raw.writeHead(200, { 'content-type': 'audio/wav', 'content-length': String(chunks.reduce((n, c) => n + c.length, 0)) });
  for (const chunk of chunks) reply.raw.write(chunk);
  reply.raw.end();
});

app.get('/readyz', async () => ({ ok: true }));

await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
const stop = () => void app.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
