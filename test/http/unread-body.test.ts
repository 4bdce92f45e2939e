/**
 * Refusals sent before the request body was read reach the client (issue 32, item 2;
 * src/http/unread-body.ts): a wrong multipart part (400), a bad key (401), a missing scope (403), a
 * JSON body over the limit (413) and exhausted usage points (429), each answered while the body is
 * still arriving, repeated hundreds of times over fresh and kept-alive connections with bodies of
 * several sizes: the client sees every answer and never EPIPE or ECONNRESET, and a kept-alive
 * connection stays usable. Past the bounds (a body declared too large, one that exceeds the limit
 * or stalls) the answer says `Connection: close` and the connection closes.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request as httpRequest } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { admin, describeEachDatabase, type TestContext } from '../support/harness.js';
import { seedTenant, type Tenant } from '../support/seed.js';
import { registerUnreadBodyHook, unreadBodyHook, UNREAD_BODY_LIMIT_BYTES } from '../../src/http/unread-body.js';

const SIZES = [16 * 1024, 256 * 1024, 2 * 1024 * 1024, 8 * 1024 * 1024];
const CHUNK = 64 * 1024;
const BOUNDARY = 'unread-body-boundary-1f2e';

interface Outcome {
  status: number;
  code: string | undefined;
  connection: string | undefined;
  reusedSocket: boolean;
  error: string | undefined;
}

/**
 * Sends `head` + `size` bytes of body in 64 KiB writes as a streaming client does (it keeps
 * writing whatever the server answers), and resolves once both the answer and the writing ended.
 */
function send(port: number, agent: Agent | false, path: string, headers: Record<string, string>, head: Buffer, size: number): Promise<Outcome> {
  return new Promise((resolve) => {
    let error: string | undefined;
    let answer: Omit<Outcome, 'error' | 'reusedSocket'> | undefined;
    let wrote = false;
    const settle = () => {
      if ((answer || error) && (wrote || error)) resolve({ ...(answer ?? { status: 0, code: undefined, connection: undefined }), reusedSocket: req.reusedSocket, error });
    };
    const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path, agent, headers: { ...headers, 'content-length': String(head.length + size) } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c));
      res.on('end', () => {
        let code: string | undefined;
        try {
          code = JSON.parse(text).code;
        } catch {
          code = undefined;
        }
        answer = { status: res.statusCode ?? 0, code, connection: res.headers.connection };
        settle();
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      error = err.code ?? err.message;
      settle();
    });
    // A stalled exchange (the server stopped reading and never answered) fails instead of hanging.
    const stall = setTimeout(() => {
      error = 'STALLED';
      req.destroy();
      settle();
    }, 20_000);
    stall.unref();
    req.on('close', () => clearTimeout(stall));
    const chunk = Buffer.alloc(CHUNK, 0x61);
    const write = (b: Buffer) => (req.write(b) ? Promise.resolve() : new Promise<void>((r) => req.once('drain', () => r())));
    void (async () => {
      await write(head);
      for (let left = size; left > 0 && !error; left -= CHUNK) await write(left >= CHUNK ? chunk : chunk.subarray(0, left));
      req.end(() => {
        wrote = true;
        settle();
      });
    })();
  });
}

function multipartHead(fieldName: string): Buffer {
  return Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${fieldName}"; filename="x.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
}

interface Refusal {
  name: string;
  status: number;
  /** The codes the refusal may carry (a key refused again and again is suspended: 403 KEY_SUSPENDED). */
  codes: string[];
  path: string;
  headers: (t: Tenant) => Record<string, string>;
  head: Buffer;
  minSize?: number;
}

describeEachDatabase(
  'answers sent before the body was read',
  (get) => {
    let port = 0;
    let tenant: Tenant;
    let readOnly: Tenant;
    let limited: Tenant;

    before(async () => {
      const ctx: TestContext = get();
      // A test key: the estimate of chat.generate below is simulated work.
      tenant = await seedTenant(ctx.deps, { mode: 'test', credits: 1_000_000 });
      readOnly = await seedTenant(ctx.deps, { key: { scopes: ['media:read'] } });
      limited = await seedTenant(ctx.deps);
      // Fewer points per minute than one upload costs (10): every upload is refused 429.
      const settings = await admin(ctx, `/admin/v1/workspaces/${limited.workspace.id}/settings`, { limits: { pointsPerMinute: 5 } });
      assert.equal(settings.statusCode, 200, settings.body);
      await ctx.app.listen({ port: 0, host: '127.0.0.1' });
      port = (ctx.app.server.address() as AddressInfo).port;
    });

    const upload = (t: Tenant) => ({ authorization: `Bearer ${t.secret}`, 'x-service-workspace': t.workspace.id, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` });
    const refusals: Refusal[] = [
      { name: 'a part not named file', status: 400, codes: ['INVALID_REQUEST'], path: '/v1/media/upload', headers: () => upload(tenant), head: multipartHead('picture') },
      { name: 'an unknown key', status: 401, codes: ['UNAUTHENTICATED'], path: '/v1/media/upload', headers: () => ({ ...upload(tenant), authorization: 'Bearer wask_unknown0000000000000000000000' }), head: multipartHead('file') },
      { name: 'a key without media:write', status: 403, codes: ['FORBIDDEN_SCOPE', 'KEY_SUSPENDED'], path: '/v1/media/upload', headers: () => upload(readOnly), head: multipartHead('file') },
      { name: 'exhausted usage points', status: 429, codes: ['RATE_LIMITED'], path: '/v1/media/upload', headers: () => upload(limited), head: multipartHead('file') },
      {
        name: 'a JSON body over the limit',
        status: 413,
        codes: ['PAYLOAD_TOO_LARGE'],
        path: '/v1/estimates',
        headers: () => ({ authorization: `Bearer ${tenant.secret}`, 'x-service-workspace': tenant.workspace.id, 'content-type': 'application/json' }),
        head: Buffer.from('{"operationId":"chat.generate","input":{"pad":"'),
        minSize: 2 * 1024 * 1024,
      },
    ];

    for (const refusal of refusals) {
      test(`${refusal.name}: ${refusal.status} ${refusal.codes[0]} reaches the client on fresh and kept-alive connections, never EPIPE or ECONNRESET`, async () => {
        const outcomes: Outcome[] = [];
        for (const size of SIZES.filter((s) => s >= (refusal.minSize ?? 0))) {
          // More rounds of the small bodies: the race between answer and body is tightest there.
          const rounds = size <= 256 * 1024 ? 20 : 4;
          // A fresh connection per request (the client itself asks for Connection: close).
          for (let i = 0; i < rounds; i++) outcomes.push(await send(port, false, refusal.path, refusal.headers(tenant), refusal.head, size));
          const agent = new Agent({ keepAlive: true, maxSockets: 1 });
          try {
            const kept: Outcome[] = [];
            for (let i = 0; i < rounds; i++) kept.push(await send(port, agent, refusal.path, refusal.headers(tenant), refusal.head, size));
            outcomes.push(...kept);
            assert.deepEqual(kept.map((o) => o.connection).filter((c) => c !== undefined && c !== 'keep-alive'), [], `${size} bytes: within the bounds the connection stays open`);
            assert.ok(kept.slice(1).every((o) => o.reusedSocket), `${size} bytes: the kept-alive connection carried every later request`);
          } finally {
            agent.destroy();
          }
        }
        const failures = outcomes.filter((o) => o.error !== undefined || o.status !== refusal.status || !refusal.codes.includes(o.code ?? ''));
        const seen = [...new Set(failures.map((o) => `${o.status} ${o.code} ${o.error ?? ''}`))];
        assert.equal(failures.length, 0, `${failures.length} of ${outcomes.length} answers did not arrive as ${refusal.status} ${refusal.codes.join(' or ')}: ${seen.join('; ')}`);
      });
    }

    test('a body that was read whole is answered at once, also when injected (no socket, no parser)', async () => {
      const ctx: TestContext = get();
      for (const secret of [tenant.secret, 'wask_unknown0000000000000000000000']) {
        const t0 = performance.now();
        const res = await ctx.app.inject({
          method: 'POST',
          url: '/v1/estimates',
          headers: { authorization: `Bearer ${secret}`, 'x-service-workspace': tenant.workspace.id },
          payload: { operationId: 'chat.generate', input: { messages: [{ role: 'user', content: 'hi' }] } },
        });
        assert.equal(res.statusCode, secret === tenant.secret ? 200 : 401, res.body);
        assert.ok(performance.now() - t0 < 2000, `answered in ${Math.round(performance.now() - t0)} ms, not after the unread-body wait`);
      }
    });

    test('a body declared over the bound is answered with Connection: close, and the connection closes', async () => {
      const socket = connect(port, '127.0.0.1');
      await new Promise<void>((r) => socket.once('connect', () => r()));
      const head = multipartHead('picture');
      socket.write(
        `POST /v1/media/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${tenant.secret}\r\nX-Service-Workspace: ${tenant.workspace.id}\r\n` +
          `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${UNREAD_BODY_LIMIT_BYTES + 1024 * 1024}\r\n\r\n`,
      );
      socket.write(head);
      socket.write(Buffer.alloc(64 * 1024, 0x61));
      let text = '';
      socket.setEncoding('utf8').on('data', (c: string) => (text += c));
      const ended = await new Promise<boolean>((r) => {
        socket.once('end', () => r(true));
        setTimeout(() => r(false), 10_000);
      });
      socket.destroy();
      assert.equal(ended, true, `the connection closed; received: ${text}`);
      assert.match(text, /^HTTP\/1\.1 (400|413) /);
      assert.match(text, /\r\nconnection: close\r\n/i);
    });
  },
  {},
  ['sqlite'],
);

/** A bare server with the hook at small bounds, refusing every request before reading its body. */
async function refusingServer(limitBytes: number, limitMs: number) {
  const app = Fastify();
  registerUnreadBodyHook(app, unreadBodyHook(limitBytes, limitMs));
  app.addContentTypeParser('application/octet-stream', (_request, _payload, done) => done(null, undefined));
  app.post('/refuse', { onRequest: async (_request, reply) => reply.status(403).send({ code: 'NO' }) }, async () => ({ ok: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, port: (app.server.address() as AddressInfo).port };
}

/** Writes a chunked request and `bodyBytes` of body (then stops writing, without ending it); resolves with what came back. */
async function rawChunked(port: number, bodyBytes: number): Promise<{ text: string; closed: boolean }> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((r) => socket.once('connect', () => r()));
  let text = '';
  socket.setEncoding('utf8').on('data', (c: string) => (text += c));
  socket.on('error', () => {});
  socket.write('POST /refuse HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n');
  const piece = Buffer.alloc(16 * 1024, 0x62);
  for (let sent = 0; sent < bodyBytes; sent += piece.length) socket.write(`${piece.length.toString(16)}\r\n${piece.toString('latin1')}\r\n`);
  const closed = await new Promise<boolean>((r) => {
    socket.once('close', () => r(true));
    setTimeout(() => r(false), 5000);
  });
  socket.destroy();
  return { text, closed };
}

test('a body without a declared length that exceeds the byte bound: Connection: close, then the connection closes', async () => {
  const { app, port } = await refusingServer(256 * 1024, 10_000);
  try {
    const { text, closed } = await rawChunked(port, 1024 * 1024);
    assert.match(text, /^HTTP\/1\.1 403 /);
    assert.match(text, /\r\nconnection: close\r\n/i);
    assert.equal(closed, true);
  } finally {
    await app.close();
  }
});

test('a body that stalls past the time bound: Connection: close after the bound, then the connection closes', async () => {
  const { app, port } = await refusingServer(1024 * 1024, 300);
  try {
    const t0 = Date.now();
    const { text, closed } = await rawChunked(port, 32 * 1024);
    assert.ok(Date.now() - t0 >= 300, 'waited for the rest of the body up to the bound');
    assert.match(text, /^HTTP\/1\.1 403 /);
    assert.match(text, /\r\nconnection: close\r\n/i);
    assert.equal(closed, true);
  } finally {
    await app.close();
  }
});
