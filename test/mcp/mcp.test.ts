/**
 * The MCP transport (decisions.md; spec Rule 8) over a real socket, with the SDK's own client.
 * Tenants whose calls reach an operation use test keys (simulated work, the test balance); the
 * others are live keys.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { listRoutes } from '../../src/http/route-catalogue.js';
import { MCP_UPLOAD_MAX_BASE64, routesWithoutTool } from '../../src/mcp/tools.js';
import { admin, call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { scopeOf, seedKey, seedTenant, type Tenant } from '../support/seed.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { drain } from '../support/jobs.js';
import { baseUrl } from '../support/base-url.js';
import { callTool, connectClient } from '../support/mcp-client.js';

const PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const CHAT = { messages: [{ role: 'user', content: 'Hello over MCP' }], maxTokens: 50 };

async function minuteUsed(ctx: TestContext, t: Tenant): Promise<number> {
  return (await call(ctx, 'GET', '/v1/usage', { secret: t.secret, workspaceId: t.workspace.id })).json().data.points.minuteUsed - 1;
}

describeEachDatabase('MCP transport', (get) => {
  test('tools/list: one service_<area>_<verb> tool per public endpoint (the stream excepted), each taking workspaceId plus the REST inputs, strictly', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const client = await connectClient(ctx, t.secret);
    try {
      const { tools } = await client.listTools();
      const names = tools.map((x) => x.name);
      for (const name of ['service_workspaces_list', 'service_tools_list', 'service_estimates_create', 'service_runs_create', 'service_jobs_get', 'service_jobs_output', 'service_media_upload']) {
        assert.ok(names.includes(name), `${name} is offered`);
      }
      assert.deepEqual(routesWithoutTool(listRoutes(ctx.app)), [], 'every public route has a tool or a reason not to');
      for (const x of tools) {
        assert.match(x.name, /^service_[a-z]+_[a-z_]+$/);
        assert.equal(x.inputSchema.type, 'object');
        assert.ok(x.inputSchema.required?.includes('workspaceId'), `${x.name} takes workspaceId`);
        assert.equal((x.inputSchema as { additionalProperties?: boolean }).additionalProperties, false);
      }
      const runs = tools.find((x) => x.name === 'service_runs_create')!;
      assert.deepEqual([...runs.inputSchema.required!].sort(), ['input', 'operationId', 'workspaceId'], 'idempotencyKey is optional');
      assert.ok(runs.inputSchema.properties!.idempotencyKey);
      const output = tools.find((x) => x.name === 'service_jobs_output')!;
      assert.deepEqual(Object.keys(output.inputSchema.properties!).sort(), ['cursor', 'jobId', 'workspaceId']);
      const upload = tools.find((x) => x.name === 'service_media_upload')!;
      assert.deepEqual([...upload.inputSchema.required!].sort(), ['dataBase64', 'mimeType', 'name', 'workspaceId']);
      assert.equal((upload.inputSchema.properties!.dataBase64 as { maxLength: number }).maxLength, MCP_UPLOAD_MAX_BASE64);
    } finally {
      await client.close();
    }
  });

  test('the key authenticates the MCP endpoint: none or unknown is HTTP 401, a key without the mcp transport 403 FORBIDDEN_TRANSPORT, off its IP ranges 403 FORBIDDEN_IP; an mcp-only key cannot use REST', async () => {
    const ctx = get();
    const base = await baseUrl(ctx);
    const t = await seedTenant(ctx.deps);
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const post = (authorization?: string) =>
      fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(authorization ? { authorization } : {}) }, body: JSON.stringify(init) });
    const none = await post();
    assert.equal(none.status, 401);
    assert.equal(((await none.json()) as { code: string }).code, 'UNAUTHENTICATED');
    assert.equal((await post(`Bearer wask_${'A'.repeat(43)}`)).status, 401);
    const restOnly = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { transports: ['rest'] });
    const refused = await post(`Bearer ${restOnly.secret}`);
    assert.equal(refused.status, 403);
    assert.equal(((await refused.json()) as { code: string }).code, 'FORBIDDEN_TRANSPORT');
    assert.equal((await post(`Bearer ${t.secret}`)).status, 200);
    // IP ranges are checked against the MCP client's own address (here loopback), first.
    const ranged = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { transports: ['mcp'], ipRanges: ['10.0.0.0/8'] });
    const offNetwork = await post(`Bearer ${ranged.secret}`);
    assert.equal(offNetwork.status, 403);
    assert.equal(((await offNetwork.json()) as { code: string }).code, 'FORBIDDEN_IP');
    const inside = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { transports: ['mcp'], ipRanges: ['127.0.0.0/8'] });
    assert.equal((await post(`Bearer ${inside.secret}`)).status, 200);
    const mcpOnly = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { transports: ['mcp'] });
    const rest = await call(ctx, 'GET', '/v1/workspaces', { secret: mcpOnly.secret, workspaceId: t.workspace.id });
    assert.equal(rest.json().code, 'FORBIDDEN_TRANSPORT', 'the internal MCP marker cannot be claimed from outside');
    const spoofed = await call(ctx, 'GET', '/v1/workspaces', { secret: mcpOnly.secret, workspaceId: t.workspace.id, headers: { 'x-mcp-internal': 'guess' } });
    assert.equal(spoofed.json().code, 'FORBIDDEN_TRANSPORT');
    const client = await connectClient(ctx, mcpOnly.secret);
    try {
      const listed = await callTool(client, 'service_workspaces_list', { workspaceId: t.workspace.id });
      assert.equal(listed.status, 200);
      assert.equal(listed.body.code, 'PUBLIC_WORKSPACES_LIST');
    } finally {
      await client.close();
    }
    assert.equal((await fetch(`${base}/mcp`)).status, 405);
  });

  test('JSON-RPC batches: refused for revisions that removed them (2025-06-18 on); an empty batch, or one that repeats a request id, is refused whole (HTTP 400, -32600) and runs nothing', async () => {
    const ctx = get();
    const base = await baseUrl(ctx);
    const t = await seedTenant(ctx.deps);
    const post = (body: unknown) =>
      fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${t.secret}`, 'mcp-protocol-version': '2025-03-26' },
        body: JSON.stringify(body),
      });
    const upload = (id: number) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'service_media_upload', arguments: { workspaceId: t.workspace.id, name: 'a.wav', mimeType: 'audio/wav', dataBase64: Buffer.from('not audio').toString('base64') } },
    });
    for (const [body, reason] of [[[], /empty/], [[upload(7), upload(7)], /repeats the request id 7/]] as const) {
      const res = await post(body);
      assert.equal(res.status, 400);
      assert.ok(res.headers.get('x-request-id'), 'the refusal carries X-Request-Id');
      const json = (await res.json()) as { id: unknown; error: { code: number; message: string } };
      assert.equal(json.id, null);
      assert.equal(json.error.code, -32600);
      assert.match(json.error.message, reason);
    }
    // Batches exist up to protocol revision 2025-03-26 (the one assumed without the header).
    const pings = JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'ping' }]);
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${t.secret}` };
    for (const revision of ['2025-03-26', undefined]) {
      const ping = await fetch(`${base}/mcp`, { method: 'POST', headers: { ...headers, ...(revision ? { 'mcp-protocol-version': revision } : {}) }, body: pings });
      assert.equal(ping.status, 200, 'distinct ids are answered');
      assert.deepEqual(((await ping.json()) as { id: number }[]).map((r) => r.id).sort(), [1, 2]);
    }
    for (const revision of ['2025-06-18', '2025-11-25']) {
      const refused = await fetch(`${base}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-protocol-version': revision }, body: pings });
      assert.equal(refused.status, 400, `no batches in ${revision}`);
      const json = (await refused.json()) as { id: unknown; error: { code: number; message: string } };
      assert.deepEqual([json.id, json.error.code], [null, -32600]);
      assert.match(json.error.message, /batches are not part of MCP/);
    }
  });

  test('service_runs_create runs like POST /v1/runs: same body and points, executionOrigin mcp on the job and the ledger, Idempotency-Key replays', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const client = await connectClient(ctx, t.secret);
    try {
      const before = await minuteUsed(ctx, t);
      const key = randomUUID();
      const ran = await callTool(client, 'service_runs_create', { workspaceId: t.workspace.id, operationId: 'chat.generate', input: CHAT, idempotencyKey: key });
      assert.equal(ran.status, 200, JSON.stringify(ran.body));
      assert.equal(ran.body.code, 'PUBLIC_TOOLS_RUN');
      assert.equal(ran.body.data.kind, 'result');
      assert.equal(ran.body.data.status, 'completed');
      assert.equal((await minuteUsed(ctx, t)) - before, 10 + 1, 'chat.generate costs 10 points, as on REST (plus the usage read)');
      const job = await callTool(client, 'service_jobs_get', { workspaceId: t.workspace.id, jobId: ran.body.data.jobId });
      assert.equal(job.body.data.executionOrigin, 'mcp');
      const tx = (await call(ctx, 'GET', '/v1/transactions', { secret: t.secret, workspaceId: t.workspace.id })).json().data.items[0];
      assert.equal(tx.executionOrigin, 'mcp');
      const replay = await callTool(client, 'service_runs_create', { workspaceId: t.workspace.id, operationId: 'chat.generate', input: CHAT, idempotencyKey: key });
      assert.deepEqual(replay.body.data, ran.body.data);
      const conflict = await callTool(client, 'service_runs_create', { workspaceId: t.workspace.id, operationId: 'chat.generate', input: { ...CHAT, maxTokens: 51 }, idempotencyKey: key });
      assert.deepEqual([conflict.isError, conflict.status, conflict.body.code], [true, 409, 'IDEMPOTENCY_CONFLICT']);
      await assertLedgerInvariants(ctx.deps, scopeOf(t));
    } finally {
      await client.close();
    }
  });

  test('refusals are the REST errors as tool errors: scope, workspace, invalid input, points (with Retry-After), and arguments outside the tool schema', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const other = await seedTenant(ctx.deps);
    const readOnly = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { scopes: ['workspaces:read'], transports: ['mcp'], mode: 'test' });
    const client = await connectClient(ctx, t.secret);
    const narrow = await connectClient(ctx, readOnly.secret);
    try {
      assert.deepEqual((await narrow.listTools()).tools.map((x) => x.name), ['service_workspaces_list'], 'tools/list shows the tools the key’s scopes allow');
      const perOperation = await callTool(narrow, 'service_run_chat_generate', { workspaceId: t.workspace.id, ...CHAT });
      assert.deepEqual([perOperation.isError, perOperation.status, perOperation.body.code], [true, 403, 'FORBIDDEN_SCOPE'], 'a per-operation tool is refused as its REST run');
      const scope = await callTool(narrow, 'service_runs_create', { workspaceId: t.workspace.id, operationId: 'chat.generate', input: CHAT, idempotencyKey: randomUUID() });
      assert.deepEqual([scope.isError, scope.status, scope.body.code], [true, 403, 'FORBIDDEN_SCOPE']);
      const foreign = await callTool(client, 'service_balance_get', { workspaceId: other.workspace.id });
      assert.deepEqual([foreign.isError, foreign.status, foreign.body.code], [true, 403, 'FORBIDDEN_WORKSPACE']);
      const invalid = await callTool(client, 'service_estimates_create', { workspaceId: t.workspace.id, operationId: 'chat.generate', input: { messages: 'nope' } });
      assert.deepEqual([invalid.status, invalid.body.code], [400, 'INVALID_INPUT']);
      assert.ok(invalid.body.details.errors.every((e: { pointer: string }) => e.pointer.startsWith('/input')));
      const extra = await callTool(client, 'service_balance_get', { workspaceId: t.workspace.id, bogus: 1 });
      assert.deepEqual([extra.isError, extra.body.code], [true, 'INVALID_REQUEST']);
      const unknown = await callTool(client, 'service_nothing_here', { workspaceId: t.workspace.id });
      assert.deepEqual([unknown.isError, unknown.body.code], [true, 'NOT_FOUND']);

      await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { pointsPerMinute: 5 } });
      const used = await minuteUsed(ctx, t);
      assert.ok(used < 5);
      let limited;
      for (let i = 0; i < 5 && !limited?.isError; i++) limited = await callTool(client, 'service_balance_get', { workspaceId: t.workspace.id });
      assert.deepEqual([limited!.status, limited!.body.code, limited!.body.details.limit], [429, 'RATE_LIMITED', 'POINTS_MINUTE']);
      assert.ok(limited!.retryAfter! >= 1, 'Retry-After is passed on');
    } finally {
      await client.close();
      await narrow.close();
    }
  });

  test('a message holding a "__proto__" key or "constructor.prototype" (refused whole on REST, 400 INVALID_REQUEST): its tool calls get that refusal as a tool error and run nothing; other requests are answered', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const post = (payload: string, url = '/mcp') =>
      ctx.app.inject({ method: 'POST', url, payload, headers: { authorization: `Bearer ${t.secret}`, 'x-service-workspace': t.workspace.id, 'content-type': 'application/json', accept: 'application/json, text/event-stream' } });
    const rest = await post(`{"operationId":"chat.generate","input":{"messages":[{"role":"user","content":"hi"}]},"__proto__":{"x":1}}`, '/v1/estimates');
    assert.deepEqual([rest.statusCode, rest.json().code], [400, 'INVALID_REQUEST'], 'REST refuses the body whole');
    const jobsBefore = await ctx.deps.db.selectFrom('jobs').select('id').where('workspace_id', '=', scopeOf(t)).execute();
    const bodies = [
      `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"service_balance_get","arguments":{"workspaceId":"${t.workspace.id}","__proto__":{"limit":1}}}}`,
      `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"service_run_chat_generate","arguments":{"workspaceId":"${t.workspace.id}","messages":[{"role":"user","content":"hi","constructor":{"prototype":{"x":1}}}]}}}`,
    ];
    for (const body of bodies) {
      const res = await post(body);
      assert.equal(res.statusCode, 200, res.body);
      const rpc = res.json();
      assert.equal(rpc.id, 7);
      assert.equal(rpc.result.isError, true);
      assert.equal(rpc.result._meta.httpStatus, 400);
      const refusal = JSON.parse(rpc.result.content[0].text);
      assert.equal(refusal.code, 'INVALID_REQUEST');
      assert.deepEqual([refusal.message, refusal.details], [rest.json().message, rest.json().details], "the tool error is REST's refusal, naming the keys");
    }
    const jobsAfter = await ctx.deps.db.selectFrom('jobs').select('id').where('workspace_id', '=', scopeOf(t)).execute();
    assert.equal(jobsAfter.length, jobsBefore.length, 'nothing ran');
    const listed = await post(`{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"__proto__":{"x":1}}}`);
    assert.equal(listed.statusCode, 200);
    assert.ok(listed.json().result.tools.length > 0, 'a request without arguments is answered');
    const broken = await post(`{"jsonrpc":"2.0","id":9,"method":"tools/list"`);
    assert.deepEqual([broken.statusCode, broken.json().code], [400, 'INVALID_REQUEST'], 'a body that is not JSON is still refused');
  });

  test(`service_media_upload takes the file as base64 (at most ${MCP_UPLOAD_MAX_BASE64} characters) with the REST upload's checks; service_jobs_output pages a result as REST does`, async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const client = await connectClient(ctx, t.secret);
    try {
      const uploaded = await callTool(client, 'service_media_upload', { workspaceId: t.workspace.id, name: 'pixel.png', mimeType: 'image/png', dataBase64: PIXEL_PNG });
      assert.equal(uploaded.status, 200, JSON.stringify(uploaded.body));
      assert.equal(uploaded.body.code, 'PUBLIC_MEDIA_UPLOAD');
      assert.equal(uploaded.body.data.mimeType, 'image/png');
      assert.equal(uploaded.body.data.sha256, createHash('sha256').update(Buffer.from(PIXEL_PNG, 'base64')).digest('hex'));
      const mismatch = await callTool(client, 'service_media_upload', { workspaceId: t.workspace.id, name: 'pixel.wav', mimeType: 'audio/wav', dataBase64: PIXEL_PNG });
      assert.deepEqual([mismatch.status, mismatch.body.code], [400, 'UNSUPPORTED_MEDIA']);
      const tooLong = await callTool(client, 'service_media_upload', { workspaceId: t.workspace.id, name: 'big.png', mimeType: 'image/png', dataBase64: 'A'.repeat(MCP_UPLOAD_MAX_BASE64 + 4) });
      assert.deepEqual([tooLong.isError, tooLong.body.code], [true, 'INVALID_REQUEST']);

      const queued = await callTool(client, 'service_runs_create', {
        workspaceId: t.workspace.id,
        operationId: 'sprite.generate',
        input: { prompt: 'a knight [sim:outputBytes=30000]', frames: 2, frameWidth: 16, frameHeight: 16 },
        idempotencyKey: randomUUID(),
      });
      assert.equal(queued.status, 202, JSON.stringify(queued.body));
      await drain(ctx);
      const parts: Buffer[] = [];
      let cursor: string | undefined;
      let digest = '';
      do {
        const page = await callTool(client, 'service_jobs_output', { workspaceId: t.workspace.id, jobId: queued.body.data.jobId, ...(cursor ? { cursor } : {}) });
        assert.equal(page.status, 200, JSON.stringify(page.body));
        const data = page.body.data;
        assert.equal(data.offsetBytes, parts.reduce((n, p) => n + p.length, 0));
        digest ||= data.sha256;
        assert.equal(data.sha256, digest);
        parts.push(Buffer.from(data.fragment, 'utf8'));
        cursor = data.nextCursor ?? undefined;
      } while (cursor);
      const doc = Buffer.concat(parts);
      assert.ok(parts.length > 3);
      assert.equal(createHash('sha256').update(doc).digest('hex'), digest);
      assert.equal(JSON.parse(doc.toString('utf8')).frames.length, 2);
      await assertLedgerInvariants(ctx.deps, scopeOf(t));
    } finally {
      await client.close();
    }
  });
}, testKeySuite());
