/**
 * The floor of the request cases (b), (c) and (d): the least a server on this stack can do for
 * the same answers. One Fastify route, GET /v1/usage, with everything the contract asks of those
 * answers and nothing else: a request id (lib/ids.ts) in X-Request-Id, the presented key hashed
 * (lib/crypto.ts sha256Hex, as keys are stored) and looked up in a Map, the points of the minute
 * counted in memory, the RateLimit headers, the same bodies as the service (200 usage, 401
 * UNAUTHENTICATED, 429 RATE_LIMITED with Retry-After), and at LOG_LEVEL=info one request line
 * with the service's fields through the service's own logger (lib/logging.ts). No database, no
 * scopes, no budgets, no metrics, no plan: so no implementation of the spec can be cheaper here.
 *
 * With FLOOR_JOB_BODY (the service's own answer to GET /v1/jobs/{id}, as JSON) it also serves the
 * floor of (jb): GET /v1/jobs/{id} for the open key reads that job's snapshot by id and workspace
 * from an embedded SQLite database (one prepared read, as the service's cheapest possible read)
 * and answers it in the same envelope, with the same headers and line.
 *
 * The keys come from the environment: FLOOR_OPEN_KEY (limits out of reach) and FLOOR_LIMITED_KEY
 * (3 points a minute, so it is refused after its first three requests). Listens on 127.0.0.1:PORT.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import Fastify, { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { createServiceLogger, requestLoggerFor } from '../src/lib/logging.js';
import { newId } from '../src/lib/ids.js';
import { sha256Hex } from '../src/lib/crypto.js';

const level = process.env.LOG_LEVEL ?? 'info';
const { log } = createServiceLogger(level);
const requestLog = requestLoggerFor(log);
const logLines = requestLog.isLevelEnabled('info');

interface Tenant {
  workspaceId: string;
  keyId: string;
  minuteLimit: number;
  monthlyLimit: number;
  minuteUsed: number;
  monthlyUsed: number;
  minute: number;
}
const tenants = new Map<string, Tenant>();
const tenant = (secret: string | undefined, minuteLimit: number): void => {
  if (secret) tenants.set(sha256Hex(secret), { workspaceId: newId(), keyId: newId(), minuteLimit, monthlyLimit: 1_000_000_000_000, minuteUsed: 0, monthlyUsed: 0, minute: 0 });
};
tenant(process.env.FLOOR_OPEN_KEY, 1_000_000_000);
tenant(process.env.FLOOR_LIMITED_KEY, 3);

type FloorRequest = FastifyRequest & { tenant?: Tenant; route?: string };

let isoMinute = -1;
let minuteResetsAt = '';
const monthlyResetsAt = (() => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
})();

/** The service's way to the request line: Fastify's completion callback, no hook of its own (app.ts). */
class FloorLogController extends LogController {
  override incomingRequest(): void {}
  override routeNotFound(): void {}
  override requestCompleted(_error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (logLines) line(request, reply, (request as FloorRequest).tenant);
  }
}

function line(request: FastifyRequest, reply: FastifyReply, auth: Tenant | undefined): void {
  requestLog.info(
    {
      requestId: request.id,
      method: request.method,
      // The route's pattern, as the service logs it (set by each handler: no routeOptions built).
      route: (request as FloorRequest).route ?? 'unmatched',
      url: request.url,
      statusCode: reply.statusCode,
      responseTimeMs: Math.round(reply.elapsedTime * 10) / 10,
      ...(auth ? { workspaceId: auth.workspaceId, keyId: auth.keyId } : {}),
    },
    'request completed',
  );
}

const app = Fastify({ loggerInstance: log, logController: new FloorLogController({ disableRequestLogging: false, requestIdLogLabel: 'requestId' }), genReqId: () => newId() });
app.decorateRequest('tenant', undefined);
app.decorateRequest('route', undefined);

/** X-Request-Id, the key's hash looked up, the line's tenant and route; a 401 when the key is unknown. */
function authenticate(request: FastifyRequest, reply: FastifyReply, route: string): Tenant | undefined {
  reply.header('X-Request-Id', request.id);
  const header = request.headers.authorization;
  const auth = tenants.get(sha256Hex(typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : ''));
  (request as FloorRequest).tenant = auth;
  (request as FloorRequest).route = route;
  if (!auth) reply.code(401).send({ success: false, code: 'UNAUTHENTICATED', message: 'A valid API key is required in the Authorization header.', requestId: request.id });
  return auth;
}

/** The minute's point, with the RateLimit headers; a 429 (and false) when none is left. */
function chargePoint(request: FastifyRequest, reply: FastifyReply, auth: Tenant): boolean {
  const now = Date.now();
  const minute = Math.floor(now / 60_000);
  if (minute !== isoMinute) {
    isoMinute = minute;
    minuteResetsAt = new Date((minute + 1) * 60_000).toISOString();
  }
  if (auth.minute !== minute) {
    auth.minute = minute;
    auth.minuteUsed = 0;
  }
  const resetSeconds = String(Math.ceil(((minute + 1) * 60_000 - now) / 1000));
  reply.header('RateLimit-Limit', String(auth.minuteLimit));
  reply.header('RateLimit-Reset', resetSeconds);
  if (auth.minuteUsed >= auth.minuteLimit) {
    reply.header('RateLimit-Remaining', '0');
    reply.header('Retry-After', resetSeconds);
    reply.code(429).send({ success: false, code: 'RATE_LIMITED', message: 'Usage points per minute exhausted.', requestId: request.id, details: { limit: 'POINTS_MINUTE', resetsAt: minuteResetsAt } });
    return false;
  }
  auth.minuteUsed++;
  auth.monthlyUsed++;
  reply.header('RateLimit-Remaining', String(auth.minuteLimit - auth.minuteUsed));
  return true;
}

app.get('/v1/usage', (request, reply) => {
  const auth = authenticate(request, reply, '/v1/usage');
  if (!auth || !chargePoint(request, reply, auth)) return;
  reply.send({
    success: true,
    code: 'PUBLIC_USAGE_GET',
    message: 'Usage read.',
    data: {
      workspaceId: auth.workspaceId,
      plan: 'pro',
      points: { minuteLimit: auth.minuteLimit, minuteUsed: auth.minuteUsed, minuteResetsAt, monthlyLimit: auth.monthlyLimit, monthlyUsed: auth.monthlyUsed, monthlyResetsAt },
      budgets: [],
      streams: { enabled: true, maximum: 3 },
    },
  });
});
app.get('/readyz', async () => ({ ok: true }));

// The floor of (jb): one job's snapshot, read by id and workspace from embedded SQLite.
const jobBody = process.env.FLOOR_JOB_BODY ? (JSON.parse(process.env.FLOOR_JOB_BODY) as { code: string; message: string; data: { id: string } }) : undefined;
const dbDir = jobBody ? mkdtempSync(join(tmpdir(), 'was-bench-floor-')) : undefined;
if (jobBody && dbDir) {
  const open = tenants.get(sha256Hex(process.env.FLOOR_OPEN_KEY ?? ''))!;
  const db = new Database(join(dbDir, 'floor.db'));
  db.pragma('journal_mode = WAL');
  db.exec('create table jobs (id text primary key, workspace_id text not null, snapshot_json text not null)');
  db.prepare('insert into jobs values (?, ?, ?)').run(jobBody.data.id, open.workspaceId, JSON.stringify(jobBody.data));
  const read = db.prepare<[string, string], { snapshot_json: string }>('select snapshot_json from jobs where id = ? and workspace_id = ?');
  const head = `{"success":true,"code":${JSON.stringify(jobBody.code)},"message":${JSON.stringify(jobBody.message)},"data":`;
  app.get<{ Params: { id: string } }>('/v1/jobs/:id', (request, reply) => {
    const auth = authenticate(request, reply, '/v1/jobs/:id');
    if (!auth || !chargePoint(request, reply, auth)) return;
    const row = read.get(request.params.id, auth.workspaceId);
    if (!row) {
      reply.code(404).send({ success: false, code: 'NOT_FOUND', message: 'Not found.', requestId: request.id });
      return;
    }
    reply.type('application/json; charset=utf-8').send(`${head}${row.snapshot_json}}`);
  });
  process.on('exit', () => {
    db.close();
    rmSync(dbDir, { recursive: true, force: true });
  });
}

await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
const stop = () => void app.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
