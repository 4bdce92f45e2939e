/**
 * Streamed chat runs (issue 37 item 4): POST /v1/runs for chat.generate with
 * `Accept: text/event-stream`, on the app listening on a real socket. Against the fake OpenAI
 * server's own stream (test/support/fake-openai.ts): the deltas are the fake's chunks in order and
 * the final event carries the same envelope and job as the JSON run, at the same cost and ledger
 * entry; a client that goes away mid-reply aborts the fake's stream and is charged only what was
 * consumed. On the simulated provider (no providers file) the reply streams word by word. JSON
 * stays the default. Ledger invariants after every test that moves money. The fake OpenAI runs are
 * live keys on a providers file (a real provider's path, SIMULATE_LIVE off); the simulated
 * provider's runs use test keys (the test balance, rows in the test twin).
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, createTestContext, describeEachDatabase, disposeTestContext, testKeySuite, type TestContext } from '../support/harness.js';
import { testDatabaseNames } from '../support/databases.js';
import { scopeOf, seedTenant, type Tenant } from '../support/seed.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { balance, getJob, run } from '../support/jobs.js';
import { FakeOpenAi } from '../support/fake-openai.js';
import { apiHeaders, frameReader, streamPost, type Frame } from '../support/sse.js';
import { baseUrl } from '../support/base-url.js';
import { waitUntil } from '../support/wait.js';
import { callTool, connectClient } from '../support/mcp-client.js';
import { chatInputTokenBound } from '../../src/operations/pricing.js';

const CHAT_PRICE = { baseMillicents: 20, inputTokenMillicents: 1, outputTokenMillicents: 3 };
const CREDITS = 1_000_000;
/** Job fields that are the same for two runs of the same input with the same answer. */
const SAME_FIELDS = ['toolSlug', 'operationId', 'status', 'executionOrigin', 'progress', 'output', 'costMillicents', 'maximumCostMillicents', 'errorCode', 'version'];

const pick = (job: Record<string, unknown>) => Object.fromEntries(SAME_FIELDS.map((f) => [f, job[f]]));

/** Starts a streamed run over a real connection. */
function startStream(base: string, t: Tenant, input: Record<string, unknown>, key = randomUUID(), accept = 'text/event-stream') {
  return streamPost(`${base}/v1/runs`, apiHeaders(t, { accept, 'idempotency-key': key }), { operationId: 'chat.generate', input });
}

/** Every frame of a streamed run, the deltas' texts and the final frame. */
async function readRun(res: Response): Promise<{ frames: Frame[]; texts: string[]; last: Frame }> {
  const frames = await frameReader(res).rest();
  const texts = frames.filter((f) => f.event === 'delta').map((f) => JSON.parse(f.data!).text as string);
  return { frames: frames.filter((f) => f.comment === undefined), texts, last: frames[frames.length - 1]! };
}

async function usageEntries(ctx: TestContext, t: Tenant, jobId: string): Promise<number[]> {
  const res = await call(ctx, 'GET', '/v1/transactions?limit=100', { secret: t.secret, workspaceId: t.workspace.id });
  return (res.json().data.items as { jobId: string; type: string; amountMillicents: number }[]).filter((i) => i.jobId === jobId && i.type === 'usage').map((i) => i.amountMillicents);
}

for (const dbName of testDatabaseNames()) {
  describe(`streamed chat on an openai provider [${dbName}]`, () => {
    let fake: FakeOpenAi;
    let ctx: TestContext;
    let dir: string;
    let base: string;

    before(async () => {
      fake = await FakeOpenAi.start();
      dir = mkdtempSync(join(tmpdir(), 'was-chat-stream-'));
      const file = join(dir, 'providers.json');
      writeFileSync(
        file,
        JSON.stringify({
          providers: { fake: { type: 'openai', baseUrl: fake.baseUrl, apiKeyEnv: 'FAKE_OPENAI_KEY', privateNetwork: true, maxRetries: 0 } },
          operations: { 'chat.generate': { provider: 'fake', model: 'gpt-test-mini', price: CHAT_PRICE } },
        }),
      );
      ctx = await createTestContext(dbName, testKeySuite({ env: { PROVIDERS_FILE: file, FAKE_OPENAI_KEY: 'sk-test-operator-key-0123456789' } }));
      base = await baseUrl(ctx);
    });

    after(async () => {
      if (ctx) await disposeTestContext(ctx);
      if (fake) await fake.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    beforeEach(() => fake.reset());

    test("delivers the fake's chunks in order and ends with the same envelope, job, cost and ledger entry as the JSON run", async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const pieces = ['Hel', 'lo, ', 'wor', 'ld', ' — déjà ', 'vu ✓'];
      fake.chatReply = pieces.join('');
      fake.chatStream.pieces = pieces;
      const input = { messages: [{ role: 'user', content: 'Say hello' }], maxTokens: 64 };

      const json = await run(ctx, t, 'chat.generate', input);
      assert.equal(json.statusCode, 200, json.body);
      const jsonJob = await getJob(ctx, t, json.json().data.jobId);

      const { response } = startStream(base, t, input);
      const res = await response;
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.ok(res.headers.get('ratelimit-remaining'), 'RateLimit headers on the stream');
      assert.ok(res.headers.get('x-request-id'));
      const { frames, texts, last } = await readRun(res);
      assert.deepEqual(texts, pieces, 'the deltas are the provider chunks, in order');
      assert.deepEqual(frames.map((f) => f.event), [...pieces.map(() => 'delta'), 'result']);
      assert.equal(last.event, 'result');
      const final = JSON.parse(last.data!);

      // The envelope the JSON answer has, for its own job; and that job as GET /v1/jobs/{id} shows it.
      const { jobId, ...data } = final.data;
      const { jobId: jsonJobId, ...jsonData } = json.json().data;
      assert.notEqual(jobId, jsonJobId);
      assert.deepEqual({ ...final, data, job: undefined }, { success: true, code: 'PUBLIC_TOOLS_RUN', message: json.json().message, data: jsonData, job: undefined });
      assert.equal(data.result.message.content, pieces.join(''));
      assert.deepEqual(final.job, await getJob(ctx, t, jobId));
      assert.deepEqual(pick(final.job), pick(jsonJob));
      assert.equal(final.job.costMillicents, CHAT_PRICE.baseMillicents + 17 * CHAT_PRICE.inputTokenMillicents + 9 * CHAT_PRICE.outputTokenMillicents);

      // The provider was asked for its stream with usage, and otherwise exactly as the JSON run asked.
      const [plain, streamed] = fake.seen('/v1/chat/completions').map((r) => r.json);
      assert.deepEqual(streamed, { ...plain, stream: true, stream_options: { include_usage: true } });
      assert.deepEqual(fake.chatStreams, [{ piecesWritten: pieces.length, completed: true, closedByClient: false }]);
      assert.deepEqual(await usageEntries(ctx, t, jobId), await usageEntries(ctx, t, jsonJobId));
      assert.deepEqual(await usageEntries(ctx, t, jobId), [-final.job.costMillicents]);
      assert.equal((await balance(ctx, t)).reservedMillicents, 0);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test("a client that disconnects mid-stream aborts the fake's stream; the job is cancelled and charged only what was consumed", async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      let release!: () => void;
      fake.chatReply = 'one two three four five';
      fake.chatStream.hold = { afterPieces: 2, until: new Promise<void>((resolve) => (release = resolve)) };
      const input = { messages: [{ role: 'user', content: 'tell me a story' }], maxTokens: 200 };
      const key = randomUUID();
      const { response, request } = startStream(base, t, input, key);
      const reader = frameReader(await response);
      const first = [await reader.next(), await reader.next()].map((f) => JSON.parse(f!.data!).text);
      assert.deepEqual(first, ['one ', 'two ']);
      request.destroy();
      try {
        await waitUntil(() => fake.chatStreams[0]?.closedByClient, (closed) => closed === true, 'the provider stream to be closed by the service', 10_000, 20);
      } finally {
        release();
      }
      assert.equal(fake.chatStreams[0]!.completed, false);
      assert.equal(fake.chatStreams[0]!.piecesWritten, 2);

      const jobs = await call(ctx, 'GET', '/v1/jobs', { secret: t.secret, workspaceId: t.workspace.id });
      const jobId = jobs.json().data.items[0].id as string;
      const job = await waitUntil(() => getJob(ctx, t, jobId), (j) => j.status !== 'processing', 'the job to end');
      // No usage was reported before the cut: the input as the JSON path counts it without figures, one token per chunk received.
      const consumed = CHAT_PRICE.baseMillicents + chatInputTokenBound(input.messages) * CHAT_PRICE.inputTokenMillicents + 2 * CHAT_PRICE.outputTokenMillicents;
      assert.deepEqual([job.status, job.errorCode, job.costMillicents, job.output], ['cancelled', null, consumed, {}]);
      assert.ok(consumed < job.maximumCostMillicents);
      assert.deepEqual(await usageEntries(ctx, t, jobId), [-consumed]);
      assert.equal((await balance(ctx, t)).reservedMillicents, 0, 'the rest of the hold is released');
      await assertLedgerInvariants(ctx.deps, t.workspace.id);

      // The same Idempotency-Key replays the cancelled answer (no new call, no new charge).
      const again = await run(ctx, t, 'chat.generate', input, key);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.deepEqual([again.json().data.jobId, again.json().data.status, again.json().data.costMillicents], [jobId, 'cancelled', consumed]);
      assert.equal(fake.seen('/v1/chat/completions').length, 1);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('an MCP call with a progressToken gets the reply as progress notifications before its result', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const pieces = ['Stre', 'amed ', 'to ', 'the ', 'agent.'];
      fake.chatReply = pieces.join('');
      fake.chatStream = { pieces, hold: undefined, delayMs: 300 };
      const client = await connectClient(ctx, t.secret);
      try {
        const progress: { progress: number; total?: number; message?: string }[] = [];
        const input = { messages: [{ role: 'user', content: 'stream to me' }] };
        const outcome = await callTool(client, 'service_run_chat_generate', { workspaceId: t.workspace.id, ...input }, { onprogress: (p) => progress.push(p) });
        assert.equal(outcome.isError, false, JSON.stringify(outcome.body));
        // Each text notification carries the reply so far; the status line comes last again.
        const texts = progress.filter((p) => p.message !== undefined && !p.message.startsWith('service_run_chat_generate:')).map((p) => p.message!);
        assert.ok(texts.length >= 2, `the reply came in several notifications: ${JSON.stringify(progress)}`);
        assert.ok(texts.every((m, i) => i === 0 || (m.startsWith(texts[i - 1]!) && m.length > texts[i - 1]!.length)), JSON.stringify(texts));
        assert.equal(texts.at(-1), pieces.join(''));
        assert.match(progress.at(-1)!.message!, /^service_run_chat_generate: \d+% after \d+ s$/);
        assert.ok(progress.every((p, i) => p.total === 100 && p.progress <= 100 && (i === 0 || p.progress > progress[i - 1]!.progress)), 'progress grows within 100');
        assert.equal(outcome.body.data.result.message.content, pieces.join(''));
        assert.equal(fake.seen('/v1/chat/completions')[0]!.json.stream, true);
        assert.equal(outcome.body.data.costMillicents, CHAT_PRICE.baseMillicents + 17 + 9 * 3);
        await assertLedgerInvariants(ctx.deps, t.workspace.id);
      } finally {
        await client.close();
      }
    });

    test('a provider that reports no usage: the stream is charged the bound, as the JSON run is', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      fake.chatUsage = null;
      const input = { messages: [{ role: 'user', content: 'hi' }], maxTokens: 20 };
      const json = await run(ctx, t, 'chat.generate', input);
      const { last } = await readRun(await startStream(base, t, input).response);
      const bound = CHAT_PRICE.baseMillicents + chatInputTokenBound(input.messages) + 20 * CHAT_PRICE.outputTokenMillicents;
      assert.deepEqual([JSON.parse(last.data!).job.costMillicents, json.json().data.costMillicents], [bound, bound]);
      assert.deepEqual(JSON.parse(last.data!).data.result.usage, json.json().data.result.usage);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });
  });
}

describeEachDatabase('streamed chat on the simulated provider', (get) => {
  test('streams the reply word by word, ends with the JSON run’s job; JSON stays the default', async () => {
    const ctx = get();
    const base = await baseUrl(ctx);
    const t = await seedTenant(ctx.deps, { credits: CREDITS, mode: 'test' });
    const input = { messages: [{ role: 'user', content: 'hello streaming world [sim:cost=70]' }] };
    const json = await run(ctx, t, 'chat.generate', input);
    assert.equal(json.statusCode, 200, json.body);

    const { last, texts } = await readRun(await startStream(base, t, input).response);
    assert.deepEqual(texts, ['Simulated ', 'reply ', 'to: ', 'hello ', 'streaming ', 'world ', '[sim:cost=70]']);
    const final = JSON.parse(last.data!);
    assert.equal(final.data.result.message.content, texts.join(''));
    assert.deepEqual(final.data.result, json.json().data.result);
    assert.deepEqual(pick(final.job), pick(await getJob(ctx, t, json.json().data.jobId)));
    assert.equal(final.job.costMillicents, 70);

    // A tie, */* and no Accept answer JSON; a queued operation asked only for a stream is refused before anything runs.
    for (const accept of ['application/json, text/event-stream', '*/*', 'text/event-stream;q=0.5, application/json']) {
      const res = await call(ctx, 'POST', '/v1/runs', { secret: t.secret, workspaceId: t.workspace.id, headers: { accept, 'idempotency-key': randomUUID() }, body: { operationId: 'chat.generate', input } });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^application\/json/, accept);
    }
    const refused = await call(ctx, 'POST', '/v1/runs', {
      secret: t.secret,
      workspaceId: t.workspace.id,
      headers: { accept: 'text/event-stream', 'idempotency-key': randomUUID() },
      body: { operationId: 'image.generate', input: { prompt: 'a kite' } },
    });
    assert.equal(refused.statusCode, 400);
    assert.deepEqual([refused.json().code, refused.json().details], ['INVALID_REQUEST', { header: 'Accept' }]);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('refusals before admission stay JSON errors; a replayed key streams the stored answer', async () => {
    const ctx = get();
    const base = await baseUrl(ctx);
    const t = await seedTenant(ctx.deps, { credits: CREDITS, mode: 'test' });
    const input = { messages: [{ role: 'user', content: 'once' }] };
    const missingKey = await streamPost(`${base}/v1/runs`, apiHeaders(t, { accept: 'text/event-stream' }), { operationId: 'chat.generate', input }).response;
    assert.equal(missingKey.status, 400);
    assert.equal(((await missingKey.json()) as { code: string }).code, 'IDEMPOTENCY_KEY_REQUIRED');
    const poor = await seedTenant(ctx.deps, { credits: 1, mode: 'test' });
    const broke = await startStream(base, poor, input).response;
    assert.deepEqual([broke.status, ((await broke.json()) as { code: string }).code], [402, 'INSUFFICIENT_CREDITS']);

    const key = randomUUID();
    const first = await readRun(await startStream(base, t, input, key).response);
    const replay = await startStream(base, t, input, key).response;
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    const again = await readRun(replay);
    assert.deepEqual(again.texts, [first.texts.join('')]);
    assert.deepEqual(JSON.parse(again.last.data!).data, JSON.parse(first.last.data!).data);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
    await assertLedgerInvariants(ctx.deps, scopeOf(poor));
  });
}, testKeySuite());
