/**
 * What an agent gets from the MCP endpoint (issue 18), with the official SDK client: titles,
 * truthful hints and output schemas; one tool per operation the key may run, with its price;
 * optional idempotency keys and the lookup of a key whose answer was lost. The keys that list and
 * run tools are test keys (every operation on the simulated provider, the test balance); keys of
 * other workspaces, refused before anything runs, stay live.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { typicalInputOf } from '../../src/operations/registry.js';
import { OPERATION_IDS } from '../../src/operations/ids.js';
import { SCOPES } from '../../src/modules/auth/scopes.js';
import { call, describeEachDatabase, testConfig, testKeySuite } from '../support/harness.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { baseUrl } from '../support/base-url.js';
import { callTool, connectClient } from '../support/mcp-client.js';
import { scopeOf as workspaceScope, seedKey, seedTenant } from '../support/seed.js';
import { balance, drain } from '../support/jobs.js';
import { waitUntil } from '../support/wait.js';

const CHAT = { messages: [{ role: 'user', content: 'Hello over MCP' }], maxTokens: 50 };

/** Tools that change something (issue 18: runs, retries, webhook create/rotate/revoke, uploads …); every other tool only reads. */
const WRITES = new Set([
  'service_runs_create',
  'service_jobs_cancel',
  'service_jobs_retry',
  'service_media_upload',
  'service_webhooks_create',
  'service_webhooks_update',
  'service_webhooks_revoke',
  'service_webhooks_rotate',
  'service_deliveries_replay',
  // Test mode (issue 34): stores a sample event and sends it to the test webhooks.
  'service_test_events_trigger',
  // Voices (issue 37): deleting one is for good.
  'service_voices_delete',
]);
const DESTRUCTIVE = new Set(['service_jobs_cancel', 'service_webhooks_update', 'service_webhooks_revoke', 'service_webhooks_rotate', 'service_voices_delete']);

describeEachDatabase('MCP for agents', (get) => {
  test('every tool has a title, the four hints set truthfully and an outputSchema; one run tool per operation, priced in its description', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const client = await connectClient(ctx, t.secret);
    try {
      const { tools } = await client.listTools();
      const catalog = (await call(ctx, 'GET', '/v1/tools', { secret: t.secret, workspaceId: t.workspace.id })).json().data.items;
      const operations = new Map<string, any>(catalog.flatMap((tool: any) => tool.operations.map((op: any) => [op.operationId, op])));
      assert.equal(operations.size, OPERATION_IDS.length);
      for (const x of tools) {
        assert.ok(typeof x.title === 'string' && x.title.length > 3, `${x.name} has a title`);
        const a = x.annotations!;
        for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) assert.equal(typeof a[hint], 'boolean', `${x.name} ${hint}`);
        assert.equal(x.outputSchema?.type, 'object', `${x.name} has an outputSchema`);
        const runTool = x.name.startsWith('service_run_');
        assert.equal(a.readOnlyHint, !(WRITES.has(x.name) || runTool), `${x.name} readOnlyHint`);
        assert.equal(a.destructiveHint, DESTRUCTIVE.has(x.name), `${x.name} destructiveHint`);
        if (runTool || x.name === 'service_runs_create' || x.name === 'service_jobs_retry') {
          assert.equal(a.idempotentHint, false, `${x.name}: a call without idempotencyKey runs again`);
          assert.equal(a.openWorldHint, true, `${x.name} reaches providers`);
        }
        if (a.readOnlyHint) assert.equal(a.idempotentHint, true, `${x.name}: reads are idempotent`);
      }
      const runs = tools.find((x) => x.name === 'service_runs_create')!;
      assert.deepEqual([...((runs.inputSchema.properties!.operationId as { enum: string[] }).enum)].sort(), [...operations.keys()].sort(), 'operationId lists the key’s operations');
      for (const [operationId, op] of operations) {
        const x = tools.find((tool) => tool.name === `service_run_${operationId.replace(/[.-]/g, '_')}`);
        assert.ok(x, `a tool for ${operationId}`);
        const { workspaceId, idempotencyKey, ...own } = x.inputSchema.properties!;
        assert.ok(workspaceId && idempotencyKey);
        assert.deepEqual(own, op.inputSchema.properties, `${x.name}: the operation's input schema as GET /v1/tools serves it`);
        assert.deepEqual(x.inputSchema.required, ['workspaceId', ...(op.inputSchema.required ?? [])]);
        assert.match(x.description!, new RegExp(`Costs ${op.usagePoints} usage points`));
      }
      // The figures quoted are those POST /v1/estimates gives for the typical input.
      const est = await call(ctx, 'POST', '/v1/estimates', { secret: t.secret, workspaceId: t.workspace.id, body: { operationId: 'image.generate', input: typicalInputOf('image.generate').input } });
      assert.equal(est.statusCode, 200, est.body);
      const image = tools.find((x) => x.name === 'service_run_image_generate')!;
      assert.ok(image.description!.includes(`estimated at ${est.json().data.estimatedCostMillicents.toLocaleString('en-US')} millicents`), image.description);
      assert.ok(image.description!.includes(`at most ${est.json().data.maximumCostMillicents.toLocaleString('en-US')} millicents`), image.description);

      // A key allowed one operation sees one run tool and that operation alone in the enum.
      const narrow = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { operations: ['chat.generate'], transports: ['mcp'], mode: 'test' });
      const narrowClient = await connectClient(ctx, narrow.secret);
      try {
        const listed = (await narrowClient.listTools()).tools;
        assert.deepEqual(listed.filter((x) => x.name.startsWith('service_run_')).map((x) => x.name), ['service_run_chat_generate']);
        assert.deepEqual((listed.find((x) => x.name === 'service_runs_create')!.inputSchema.properties!.operationId as { enum: string[] }).enum, ['chat.generate']);
        const refused = await callTool(narrowClient, 'service_run_image_generate', { workspaceId: t.workspace.id, prompt: 'a cat' });
        assert.deepEqual([refused.isError, refused.status, refused.body.code], [true, 403, 'FORBIDDEN_OPERATION'], 'as REST refuses it');
      } finally {
        await narrowClient.close();
      }
    } finally {
      await client.close();
    }
  });

  test('a per-operation tool runs its operation; without idempotencyKey the server draws one and returns it, and repeating with it spends nothing more', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const client = await connectClient(ctx, t.secret);
    try {
      const ran = await callTool(client, 'service_run_chat_generate', { workspaceId: t.workspace.id, ...CHAT });
      assert.equal(ran.status, 200, JSON.stringify(ran.body));
      assert.deepEqual([ran.body.code, ran.body.data.kind, ran.body.data.status], ['PUBLIC_TOOLS_RUN', 'result', 'completed']);
      assert.match(ran.body.idempotencyKey, /^[0-9a-f-]{36}$/);
      assert.deepEqual(ran.structured, ran.body, 'structuredContent is the same body');
      const spent = await balance(ctx, t);
      const again = await callTool(client, 'service_run_chat_generate', { workspaceId: t.workspace.id, ...CHAT, idempotencyKey: ran.body.idempotencyKey });
      assert.deepEqual(again.body.data, ran.body.data, 'the same answer');
      assert.deepEqual(await balance(ctx, t), spent, 'nothing more spent');
      const other = await callTool(client, 'service_runs_create', { workspaceId: t.workspace.id, operationId: 'chat.generate', input: CHAT });
      assert.notEqual(other.body.idempotencyKey, ran.body.idempotencyKey, 'each call without a key gets its own');
      assert.notEqual(other.body.data.jobId, ran.body.data.jobId);
      const invalid = await callTool(client, 'service_run_chat_generate', { workspaceId: t.workspace.id, messages: 'nope' });
      assert.deepEqual([invalid.isError, invalid.status, invalid.body.code], [true, 400, 'INVALID_INPUT']);
      assert.deepEqual(invalid.body.details.errors.map((e: { pointer: string }) => e.pointer), ['/input/messages']);
      const noWorkspace = await callTool(client, 'service_run_chat_generate', { ...CHAT });
      assert.deepEqual([noWorkspace.isError, noWorkspace.body.code], [true, 'INVALID_REQUEST']);
      const retried = await callTool(client, 'service_run_music_generate', { workspaceId: t.workspace.id, prompt: 'a tune [sim:fail=PROVIDER_ERROR]', durationSeconds: 5 });
      assert.equal(retried.status, 202);
      await drain(ctx);
      const retry = await callTool(client, 'service_jobs_retry', { workspaceId: t.workspace.id, jobId: retried.body.data.jobId });
      assert.equal(retry.status, 202, JSON.stringify(retry.body));
      assert.match(retry.body.idempotencyKey, /^[0-9a-f-]{36}$/, 'retries get a key too');
      await drain(ctx);
      await assertLedgerInvariants(ctx.deps, workspaceScope(t));
    } finally {
      await client.close();
    }
  });

  test('service_runs_lookup finds the job of a call whose answer was lost, for the same key and workspace only', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const client = await connectClient(ctx, t.secret);
    try {
      // The answer is dropped: the client gives up on the HTTP exchange while the run is under way.
      const key = randomUUID();
      const abort = new AbortController();
      const lost = fetch(`${await baseUrl(ctx)}/mcp`, {
        method: 'POST',
        signal: abort.signal,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${t.secret}`, 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'service_run_chat_generate', arguments: { workspaceId: t.workspace.id, messages: [{ role: 'user', content: 'slow [sim:delay=400]' }], idempotencyKey: key } },
        }),
      });
      // The answer is dropped once the run is admitted (its key is then in flight), not after a
      // delay that a loaded machine may not have reached the server in.
      const lookup = () => callTool(client, 'service_runs_lookup', { workspaceId: t.workspace.id, idempotencyKey: key });
      await waitUntil(lookup, (r) => r.status === 200, 'the run to be admitted', 60_000, 20);
      abort.abort();
      await lost.catch(() => undefined);
      const found = await waitUntil(lookup, (r) => r.status === 200 && r.body.data.state === 'completed', 'the run to complete', 60_000, 50);
      assert.equal(found!.status, 200, JSON.stringify(found!.body));
      assert.equal(found!.body.code, 'PUBLIC_RUNS_LOOKUP');
      const data = found!.body.data;
      assert.deepEqual([data.idempotencyKey, data.state, data.statusCode, data.response.kind, data.response.status], [key, 'completed', 200, 'result', 'completed']);
      const job = await callTool(client, 'service_jobs_get', { workspaceId: t.workspace.id, jobId: data.jobId });
      assert.equal(job.body.data.operationId, 'chat.generate');
      // Repeating the call with the key replays it (no second job).
      const replay = await callTool(client, 'service_run_chat_generate', { workspaceId: t.workspace.id, messages: [{ role: 'user', content: 'slow [sim:delay=400]' }], idempotencyKey: key });
      assert.equal(replay.body.data.jobId, data.jobId);

      const unknown = await callTool(client, 'service_runs_lookup', { workspaceId: t.workspace.id, idempotencyKey: randomUUID() });
      assert.deepEqual([unknown.isError, unknown.status, unknown.body.code], [true, 404, 'NOT_FOUND']);
      const missing = await callTool(client, 'service_runs_lookup', { workspaceId: t.workspace.id });
      assert.deepEqual([missing.isError, missing.body.code], [true, 'INVALID_REQUEST'], 'the lookup needs the key');
      // Another key of the same owner, and another workspace, never see it.
      const sibling = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { transports: ['mcp'], mode: 'test' });
      const siblingClient = await connectClient(ctx, sibling.secret);
      try {
        const hidden = await callTool(siblingClient, 'service_runs_lookup', { workspaceId: t.workspace.id, idempotencyKey: key });
        assert.deepEqual([hidden.status, hidden.body.code], [404, 'NOT_FOUND']);
      } finally {
        await siblingClient.close();
      }
      const other = await seedTenant(ctx.deps);
      const foreign = await callTool(client, 'service_runs_lookup', { workspaceId: other.workspace.id, idempotencyKey: key });
      assert.deepEqual([foreign.status, foreign.body.code], [403, 'FORBIDDEN_WORKSPACE']);
      // Kept 24 hours.
      ctx.clock.advance(24 * 3_600_000 + 1000);
      const expired = await callTool(client, 'service_runs_lookup', { workspaceId: t.workspace.id, idempotencyKey: key });
      assert.deepEqual([expired.status, expired.body.code], [404, 'NOT_FOUND']);
      await assertLedgerInvariants(ctx.deps, workspaceScope(t));
    } finally {
      await client.close();
    }
  });

  test('produced files come back as resource_link blocks (name, MIME type, size, signed URL); a failed job and a refusal say their code and what to do next', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 200_000, mode: 'test' });
    const client = await connectClient(ctx, t.secret);
    try {
      const queued = await callTool(client, 'service_run_image_generate', { workspaceId: t.workspace.id, prompt: 'two lighthouses', count: 2, width: 256, height: 256 });
      assert.equal(queued.status, 202, JSON.stringify(queued.body));
      await drain(ctx);
      const job = await callTool(client, 'service_jobs_get', { workspaceId: t.workspace.id, jobId: queued.body.data.jobId });
      assert.equal(job.body.data.status, 'completed');
      const images = job.body.data.output.images as { mediaId: string; url: string; mimeType: string; sizeBytes: number }[];
      assert.equal(images.length, 2);
      const links = job.content.filter((c) => c.type === 'resource_link');
      assert.deepEqual(
        links.map((l) => [l.uri, l.mimeType, l.size]),
        images.map((i) => [i.url, i.mimeType, i.sizeBytes]),
        'one link per produced file, in order',
      );
      for (const link of links) {
        assert.ok(link.name, 'each link is named');
        const signed = new URL(link.uri!); // under PUBLIC_BASE_URL; the test server listens elsewhere
        const res = await fetch(`${await baseUrl(ctx)}${signed.pathname}${signed.search}`);
        assert.equal(res.status, 200, 'the signed URL works without the API key');
        assert.equal((await res.arrayBuffer()).byteLength, link.size);
      }
      assert.equal(job.body.nextStep, undefined, 'a completed job needs no advice');

      const failing = await callTool(client, 'service_run_music_generate', { workspaceId: t.workspace.id, prompt: 'a tune [sim:fail=PROVIDER_REJECTED]', durationSeconds: 5 });
      await drain(ctx);
      const failed = await callTool(client, 'service_jobs_get', { workspaceId: t.workspace.id, jobId: failing.body.data.jobId });
      assert.deepEqual([failed.isError, failed.body.data.status, failed.body.data.errorCode], [false, 'failed', 'PROVIDER_REJECTED']);
      assert.deepEqual([failed.body.nextStep.errorCode, failed.body.nextStep.action], ['PROVIDER_REJECTED', 'change_input']);
      assert.ok(failed.content.some((c) => c.type === 'text' && c.text!.startsWith('PROVIDER_REJECTED: ')), 'the advice is also plain text');
      const flaky = await callTool(client, 'service_run_music_generate', { workspaceId: t.workspace.id, prompt: 'a tune [sim:fail=PROVIDER_TIMEOUT]', durationSeconds: 5 });
      await drain(ctx);
      const timedOut = await callTool(client, 'service_jobs_get', { workspaceId: t.workspace.id, jobId: flaky.body.data.jobId });
      assert.equal(timedOut.body.nextStep.action, 'retry');
      assert.match(timedOut.body.nextStep.advice, /service_jobs_retry/);

      const poor = await seedTenant(ctx.deps, { mode: 'test' });
      const poorClient = await connectClient(ctx, poor.secret);
      try {
        const refused = await callTool(poorClient, 'service_run_image_generate', { workspaceId: poor.workspace.id, prompt: 'a lighthouse' });
        assert.deepEqual([refused.isError, refused.status, refused.body.code], [true, 402, 'INSUFFICIENT_CREDITS']);
        assert.deepEqual([refused.body.nextStep.errorCode, refused.body.nextStep.action], ['INSUFFICIENT_CREDITS', 'add_credits']);
        assert.equal(refused.structured, undefined, 'an error body is text only');
      } finally {
        await poorClient.close();
      }
      await assertLedgerInvariants(ctx.deps, workspaceScope(t));
      await assertLedgerInvariants(ctx.deps, workspaceScope(poor));
    } finally {
      await client.close();
    }
  });

  test('transport hygiene: Origin outside MCP_ALLOWED_ORIGINS is 403 before the key is read, requests without Origin pass; an unsupported MCP-Protocol-Version is a 400 naming the supported ones', async () => {
    const ctx = get();
    const base = await baseUrl(ctx);
    const t = await seedTenant(ctx.deps);
    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
    const post = (headers: Record<string, string>) =>
      fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: init });
    const auth = { authorization: `Bearer ${t.secret}` };
    assert.equal((await post(auth)).status, 200, 'no Origin: a non-browser client');
    // The default allow list is the origin of PUBLIC_BASE_URL.
    assert.equal((await post({ ...auth, origin: new URL(ctx.config.publicBaseUrl).origin })).status, 200);
    for (const origin of ['http://evil.example', 'null', `${new URL(ctx.config.publicBaseUrl).origin}.evil.example`]) {
      for (const headers of [{ ...auth, origin }, { origin }]) {
        const refused = await post(headers);
        assert.equal(refused.status, 403, origin);
        const body = (await refused.json()) as { code: string; requestId: string };
        assert.equal(body.code, 'FORBIDDEN_ORIGIN', 'refused before the key (none or valid) is looked at');
        assert.ok(body.requestId);
      }
    }
    const initialized = (await (await post(auth)).json()) as { result: { protocolVersion: string; capabilities: Record<string, unknown> } };
    assert.equal(initialized.result.protocolVersion, '2025-11-25');
    for (const version of ['1999-01-01', 'junk']) {
      const res = await post({ ...auth, 'mcp-protocol-version': version });
      assert.equal(res.status, 400);
      const json = (await res.json()) as { id: unknown; error: { code: number; message: string; data: { supported: string[]; requested: string } } };
      assert.deepEqual([json.id, json.error.code, json.error.data.requested], [null, -32600, version]);
      assert.ok(json.error.data.supported.includes('2025-11-25') && json.error.data.supported.includes('2025-06-18'));
      assert.match(json.error.message, /supports 2025-11-25/);
    }
    // The allow list is configurable; a malformed entry stops start-up with the others listed.
    assert.deepEqual(testConfig(ctx.dataDir, { MCP_ALLOWED_ORIGINS: 'https://app.example.com, http://localhost:6274' }).mcpAllowedOrigins, ['https://app.example.com', 'http://localhost:6274']);
    assert.throws(() => testConfig(ctx.dataDir, { MCP_ALLOWED_ORIGINS: 'https://app.example.com/path,*' }), /MCP_ALLOWED_ORIGINS: "https:\/\/app.example.com\/path"[\s\S]*MCP_ALLOWED_ORIGINS: "\*"/);
  });

  test('the new tools (one per operation, runs, lookup) follow the REST rules: another workspace is 403 FORBIDDEN_WORKSPACE, a key without the scope is 403 FORBIDDEN_SCOPE', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const other = await seedTenant(ctx.deps);
    const client = await connectClient(ctx, t.secret);
    try {
      const { tools } = await client.listTools();
      /** Arguments that fit a tool's published schema, for the checks that come before the route's own validation. */
      const argsFor = (schema: any, workspaceId: string): Record<string, unknown> => {
        const args: Record<string, unknown> = { workspaceId };
        for (const name of schema.required ?? []) {
          if (name === 'workspaceId') continue;
          const prop = schema.properties[name];
          args[name] =
            name === 'dataBase64' ? 'iVBORw0KGgo=' : name === 'operationId' ? 'chat.generate' : name === 'input' ? {} : name === 'eventTypes' ? ['job.completed'] : prop?.format === 'uuid' ? randomUUID() : prop?.type === 'array' ? [] : 'https://x.example/a';
        }
        return args;
      };
      const scopeOf = (name: string, description: string) => /scope ([a-z]+:[a-z]+)/.exec(description)?.[1] ?? (name.startsWith('service_run_') ? 'tools:run' : undefined);
      let checked = 0;
      const narrowClients = new Map<string, Awaited<ReturnType<typeof connectClient>>>();
      try {
        // The tools this issue added (the route tools' REST twins are in the shared route matrix).
        for (const x of tools.filter((tool) => tool.name.startsWith('service_run_') || tool.name === 'service_runs_lookup' || tool.name === 'service_runs_create')) {
          ctx.clock.advance(10_000); // refusals of a key count toward its suspension; keep below the threshold
          const foreign = await callTool(client, x.name, argsFor(x.inputSchema, other.workspace.id));
          assert.deepEqual([foreign.isError, foreign.status, foreign.body.code], [true, 403, 'FORBIDDEN_WORKSPACE'], `${x.name} in another workspace`);
          const scope = scopeOf(x.name, x.description!);
          assert.ok(scope, `${x.name} names its scope`);
          let narrowClient = narrowClients.get(scope);
          if (!narrowClient) {
            const narrow = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { transports: ['mcp'], scopes: SCOPES.filter((s) => s !== scope), mode: 'test' });
            narrowClient = await connectClient(ctx, narrow.secret);
            narrowClients.set(scope, narrowClient);
          }
          assert.ok(!(await narrowClient.listTools()).tools.some((listed) => listed.name === x.name), `${x.name} is not listed without ${scope}`);
          const refused = await callTool(narrowClient, x.name, argsFor(x.inputSchema, t.workspace.id));
          assert.deepEqual([refused.isError, refused.status, refused.body.code], [true, 403, 'FORBIDDEN_SCOPE'], `${x.name} without ${scope}`);
          checked++;
        }
      } finally {
        for (const c of narrowClients.values()) await c.close();
      }
      assert.equal(checked, OPERATION_IDS.length + 2, `${checked} tools checked`);
      await assertLedgerInvariants(ctx.deps, workspaceScope(t));
    } finally {
      await client.close();
    }
  });
}, testKeySuite());
