/**
 * Prompt-driven video edits (issue 37 item 2): with chat.generate mapped to an openai provider
 * (the strict fake, test/support/fake-openai.ts), video.edit's `prompt` is planned by the chat
 * model under the `edits` schema (structured output) and the plan runs on the ffmpeg engine. A
 * plan that fails any check is refused without ffmpeg ever starting (counted by a wrapper at
 * FFMPEG_PATH that logs each edit it is asked for). The maximum is the chat request's bound at
 * the chat prices plus the ffmpeg bound; the cost is the chat usage plus the output's seconds;
 * ledger invariants after each. Without a chat provider a prompt is 400 at admission, naming what
 * to configure; a test key plans with the simulated model and reaches neither the fake nor ffmpeg.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileStrict } from '../../src/http/validation.js';
import { findOperation } from '../../src/operations/registry.js';
import { assertError, assertOk } from '../support/assertions.js';
import { testDatabaseNames } from '../support/databases.js';
import { installedEngines, missingPrograms } from '../support/engines.js';
import { FakeOpenAi } from '../support/fake-openai.js';
import { call, createTestContext, disposeTestContext, testKeySuite, type TestContext } from '../support/harness.js';
import { balance, drain, getJob, readCompleteOutput, run } from '../support/jobs.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { upload } from '../support/media.js';
import { writeProvidersFile } from '../support/providers-file.js';
import { scopeOf, seedTenant, type Tenant } from '../support/seed.js';
import { makeVideo, probeMedia } from '../support/videos.js';

const CREDITS = 1_000_000;
const PER_SECOND = 100;
const MAX_OUTPUT_SECONDS = 10;
const CHAT_PRICE = { baseMillicents: 20, inputTokenMillicents: 1, outputTokenMillicents: 3 };
const USAGE = { prompt_tokens: 900, completion_tokens: 60 };
/** What the fake's usage costs at CHAT_PRICE. */
const CHAT_COST = CHAT_PRICE.baseMillicents + CHAT_PRICE.inputTokenMillicents * USAGE.prompt_tokens + CHAT_PRICE.outputTokenMillicents * USAGE.completion_tokens;
const FFMPEG_MAXIMUM = PER_SECOND * MAX_OUTPUT_SECONDS;
const SLACK_SECONDS = 0.15;

const skip = await missingPrograms('ffmpeg', 'ffprobe');
const validateResult = compileStrict(findOperation('video.edit')!.resultSchema as object);
/** The result has video.edit's documented shape. */
function assertResultShape(result: unknown): void {
  assert.equal(validateResult(result), true, JSON.stringify(validateResult.errors));
}

for (const dbName of testDatabaseNames()) {
  describe(`video.edit with a prompt [${dbName}]`, { skip }, () => {
    let fake: FakeOpenAi;
    let dir: string;
    let ctx: TestContext;
    /** The same deployment without chat.generate. */
    let bare: TestContext;

    before(async () => {
      fake = await FakeOpenAi.start();
      dir = mkdtempSync(join(tmpdir(), 'was-prompt-edit-'));
      // ffmpeg as the engine starts it, with every edit it is asked for logged (not the start-up -version).
      const ffmpeg = (await installedEngines()).ffmpeg!.path;
      const wrapper = join(dir, 'ffmpeg');
      writeFileSync(wrapper, `#!/bin/sh\ncase "$2" in -version) exec ${ffmpeg} "$@";; esac\necho edit >> ${join(dir, 'ffmpeg-runs')}\nexec ${ffmpeg} "$@"\n`);
      chmodSync(wrapper, 0o755);
      const local = { type: 'local' };
      const videoEdit = { provider: 'local', engine: 'ffmpeg', maxOutputSeconds: MAX_OUTPUT_SECONDS, price: { perSecondMillicents: PER_SECOND } };
      const withChat = writeProvidersFile(dir, 'with-chat.json', {
        providers: { llm: { type: 'openai', baseUrl: fake.baseUrl, apiKeyEnv: 'LLM_KEY', privateNetwork: true, maxRetries: 0 }, local },
        operations: { 'chat.generate': { provider: 'llm', model: 'gpt-4o-mini', price: CHAT_PRICE }, 'video.edit': videoEdit },
      });
      const withoutChat = writeProvidersFile(dir, 'without-chat.json', { providers: { local }, operations: { 'video.edit': videoEdit } });
      // SIMULATE_LIVE off: live keys get what a production server gives them.
      ctx = await createTestContext(dbName, testKeySuite({ env: { PROVIDERS_FILE: withChat, LLM_KEY: 'sk-llm-0123456789', FFMPEG_PATH: wrapper } }));
      bare = await createTestContext(dbName, testKeySuite({ env: { PROVIDERS_FILE: withoutChat, FFMPEG_PATH: wrapper } }));
    });

    after(async () => {
      if (ctx) await disposeTestContext(ctx);
      if (bare) await disposeTestContext(bare);
      if (fake) await fake.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    /** Edits ffmpeg was asked for so far. */
    const ffmpegRuns = () => (existsSync(join(dir, 'ffmpeg-runs')) ? readFileSync(join(dir, 'ffmpeg-runs'), 'utf8').trim().split('\n').length : 0);
    const chatRequests = () => fake.seen('/v1/chat/completions');

    async function uploadVideo(c: TestContext, t: Tenant, seconds = 3): Promise<string> {
      const bytes = await makeVideo({ seconds, width: 160, height: 120 });
      return assertOk(await upload(c, t, bytes, { type: 'video/mp4', filename: 'in.mp4' })).data.id as string;
    }

    /** Runs video.edit to its end with the fake answering `reply`; the job, its result and the admission's maximum. */
    async function edit(t: Tenant, input: Record<string, unknown>, reply: unknown, usage: typeof USAGE | null = USAGE) {
      fake.reset();
      fake.chatUsage = usage && { ...usage };
      fake.chatReply = typeof reply === 'string' ? reply : JSON.stringify(reply);
      const res = await run(ctx, t, 'video.edit', input);
      assert.equal(res.statusCode, 202, res.body);
      const admitted = res.json().data;
      await drain(ctx);
      const job = await getJob(ctx, t, admitted.jobId);
      const result: any = job.status === 'completed' ? JSON.parse((await readCompleteOutput(ctx, t, admitted.jobId)).bytes.toString('utf8')) : undefined;
      return { job, result, maximum: admitted.maximumCostMillicents as number };
    }

    /** The credits moved by exactly the jobs' costs, no hold is left, and the ledger invariants hold. */
    async function assertMoney(c: TestContext, t: Tenant, spent: number) {
      const b = await balance(c, t);
      assert.equal(b.reservedMillicents, 0, 'no hold is left');
      assert.equal(b.totalMillicents, CREDITS - spent, 'the credits went down by the jobs’ costs');
      await assertLedgerInvariants(c.deps, scopeOf(t));
    }

    test('the served schema takes prompt where chat.generate has a provider, and only there', async () => {
      const schemaOf = async (c: TestContext) => {
        const t = await seedTenant(c.deps);
        const tools = assertOk(await call(c, 'GET', '/v1/tools', { secret: t.secret, workspaceId: t.workspace.id })).data.items;
        return tools.flatMap((x: { operations: { operationId: string }[] }) => x.operations).find((o: { operationId: string }) => o.operationId === 'video.edit').inputSchema;
      };
      const planned = await schemaOf(ctx);
      assert.ok(planned.properties.prompt, 'prompt is offered');
      assert.deepEqual(planned.required, ['mediaId']);
      assert.deepEqual(planned.anyOf, [{ required: ['prompt'] }, { required: ['edits'] }]);
      const narrowed = await schemaOf(bare);
      assert.equal(narrowed.properties.prompt, undefined);
      assert.deepEqual([...narrowed.required].sort(), ['edits', 'mediaId']);
      assert.match(narrowed.description, /chat\.generate/);
    });

    test('a prompt runs the plan the chat model returned; the result has the steps; cost = chat usage + output seconds', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const id = await uploadVideo(ctx, t);
      const plan = [
        { type: 'trim', startSeconds: 1, endSeconds: 3 },
        { type: 'resize', width: 96, height: 96, fit: 'cover' },
        { type: 'mute' },
      ];
      const runsBefore = ffmpegRuns();
      const { job, result, maximum } = await edit(t, { mediaId: id, prompt: 'cut the first second, make it square and silent' }, { edits: plan });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assertResultShape(result);
      assert.deepEqual(result.steps, plan, 'the steps that ran are the plan');
      assert.deepEqual([result.width, result.height, result.hasAudio], [96, 96, false]);
      assert.ok(Math.abs(result.durationSeconds - 2) <= SLACK_SECONDS, `${result.durationSeconds} s`);
      const u = new URL(result.video.url);
      const probe = await probeMedia((await ctx.app.inject({ method: 'GET', url: `${u.pathname}${u.search}` })).rawPayload, 'mp4');
      assert.deepEqual(probe.streams.map((s) => s.type), ['video'], 'muted');
      assert.deepEqual([probe.streams[0]!.width, probe.streams[0]!.height], [96, 96]);
      assert.equal(ffmpegRuns() - runsBefore, 1, 'ffmpeg ran once');

      // One structured-output request: the schema strict, the prompt and the probed facts in it.
      const requests = chatRequests();
      assert.equal(requests.length, 1);
      assert.deepEqual(fake.refusals, [], 'the fake found nothing to refuse');
      const body = requests[0]!.json;
      assert.equal(body.model, 'gpt-4o-mini');
      assert.equal(body.response_format.type, 'json_schema');
      assert.equal(body.response_format.json_schema.strict, true);
      assert.equal(body.response_format.json_schema.schema.type, 'object');
      const user = body.messages.at(-1).content as string;
      assert.match(user, /cut the first second, make it square and silent/);
      assert.match(user, new RegExp(`${id}: 3\\.\\d{3} s, 160x120 pixels, with sound`));

      // The maximum: the request's bound at the chat prices (never below what was sent) plus the ffmpeg bound.
      const chatMaximum = maximum - FFMPEG_MAXIMUM;
      const sentBytes = Buffer.byteLength(body.messages.map((m: { content: string }) => m.content).join('')) + Buffer.byteLength(JSON.stringify(body.response_format));
      const inputBound = (chatMaximum - CHAT_PRICE.baseMillicents - CHAT_PRICE.outputTokenMillicents * body.max_tokens) / CHAT_PRICE.inputTokenMillicents;
      assert.ok(inputBound >= sentBytes, `input tokens bounded by ${inputBound} ≥ the ${sentBytes} bytes sent`);
      assert.ok(inputBound <= sentBytes + 400, `the bound (${inputBound}) is the request's, with small allowances`);
      const estimate = assertOk(await call(ctx, 'POST', '/v1/estimates', { secret: t.secret, workspaceId: t.workspace.id, body: { operationId: 'video.edit', input: { mediaId: id, prompt: 'cut the first second, make it square and silent' } } })).data;
      assert.equal(estimate.maximumCostMillicents, maximum);

      assert.equal(job.costMillicents, CHAT_COST + PER_SECOND * Math.ceil(result.durationSeconds), 'chat usage + output seconds');
      await assertMoney(ctx, t, job.costMillicents);
    });

    test('a prompt with edits: the model is given the steps; what it returns is what runs', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const id = await uploadVideo(ctx, t, 2);
      const plan = [{ type: 'mute' }, { type: 'format', container: 'webm' }];
      const { job, result } = await edit(t, { mediaId: id, prompt: 'as webm', edits: [{ type: 'mute' }] }, { edits: plan });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.deepEqual(result.steps, plan);
      assert.equal(result.video.mimeType, 'video/webm');
      assert.match(chatRequests()[0]!.json.messages.at(-1).content, /Steps the caller gave: \[\{"type":"mute"\}\]/);
      assert.equal(job.costMillicents, CHAT_COST + PER_SECOND * Math.ceil(result.durationSeconds));
      await assertMoney(ctx, t, job.costMillicents);
    });

    test('an invalid plan is refused: EDIT_PLAN_INVALID, ffmpeg never started, charged the chat usage only', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const id = await uploadVideo(ctx, t);
      const other = await uploadVideo(ctx, t, 1);
      const invalid: [string, unknown][] = [
        ['not JSON', 'Sure! First trim the video, then…'],
        ['outside the schema (an odd width)', { edits: [{ type: 'resize', width: 101, height: 100 }] }],
        ['an empty list', { edits: [] }],
        ['a trim that ends before it starts', { edits: [{ type: 'trim', startSeconds: 2, endSeconds: 1 }] }],
        ['a video that is not an input', { edits: [{ type: 'concat', mediaId: other }] }],
        ['a crop outside the 160×120 frame', { edits: [{ type: 'crop', x: 100, y: 0, width: 100, height: 100 }] }],
      ];
      const runsBefore = ffmpegRuns();
      let spent = 0;
      for (const [what, reply] of invalid) {
        const { job } = await edit(t, { mediaId: id, prompt: 'do something' }, reply);
        assert.equal(job.status, 'failed', `${what}: ${JSON.stringify(job)}`);
        assert.equal(job.errorCode, 'EDIT_PLAN_INVALID', what);
        assert.equal(chatRequests().length, 1, `${what}: the model was asked once`);
        assert.equal(job.costMillicents, CHAT_COST, `${what}: charged the chat usage only`);
        spent += job.costMillicents;
        await assertMoney(ctx, t, spent);
      }
      assert.equal(ffmpegRuns(), runsBefore, 'ffmpeg never ran');
    });

    test('an answer without usage figures is charged the chat part’s bound, never more', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const id = await uploadVideo(ctx, t, 1);
      const { job, maximum } = await edit(t, { mediaId: id, prompt: 'whatever' }, 'no plan today', null);
      assert.equal(job.status, 'failed');
      assert.equal(job.errorCode, 'EDIT_PLAN_INVALID');
      // The bound of the request sent: its bytes (each a token at most) and the framing allowances, and max_tokens.
      const body = chatRequests()[0]!.json;
      const sentBytes = Buffer.byteLength(body.messages.map((m: { content: string }) => m.content).join('')) + Buffer.byteLength(JSON.stringify(body.response_format));
      const atLeast = CHAT_PRICE.baseMillicents + CHAT_PRICE.inputTokenMillicents * sentBytes + CHAT_PRICE.outputTokenMillicents * body.max_tokens;
      assert.ok(job.costMillicents >= atLeast && job.costMillicents <= atLeast + 64, `${job.costMillicents} is the bound of the request sent (≥ ${atLeast})`);
      assert.ok(job.costMillicents <= maximum - FFMPEG_MAXIMUM, 'within the chat part’s maximum');
      await assertMoney(ctx, t, job.costMillicents);
    });

    test('a plan that ffmpeg runs and fails is charged its chat usage; a retry runs the same plan without asking again', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const id = await uploadVideo(ctx, t, 1);
      const plan = [{ type: 'trim', startSeconds: 5, endSeconds: 6 }];
      const runsBefore = ffmpegRuns();
      const { job } = await edit(t, { mediaId: id, prompt: 'keep the sixth second' }, { edits: plan });
      assert.equal(job.status, 'failed', JSON.stringify(job));
      assert.equal(job.errorCode, 'EMPTY_OUTPUT');
      assert.equal(job.costMillicents, CHAT_COST, 'the plan is charged; ffmpeg’s failed work is not');
      assert.equal(ffmpegRuns() - runsBefore, 1);
      await assertMoney(ctx, t, CHAT_COST);

      fake.reset();
      const retried = await call(ctx, 'POST', `/v1/jobs/${job.id}/retry`, { secret: t.secret, workspaceId: t.workspace.id, headers: { 'idempotency-key': `retry-${job.id}` } });
      assert.equal(retried.statusCode, 202, retried.body);
      await drain(ctx);
      const again = await getJob(ctx, t, job.id);
      assert.equal(again.status, 'failed');
      assert.equal(again.errorCode, 'EMPTY_OUTPUT');
      assert.equal(chatRequests().length, 0, 'the kept plan ran: the model was not asked again');
      assert.equal(ffmpegRuns() - runsBefore, 2);
      assert.equal(again.costMillicents, CHAT_COST, 'nothing more was charged');
      await assertMoney(ctx, t, CHAT_COST);
    });

    test('without a chat provider a prompt is 400 at admission naming what to configure; nothing is held', async () => {
      const t = await seedTenant(bare.deps, { credits: CREDITS });
      const id = await uploadVideo(bare, t);
      for (const input of [{ mediaId: id, prompt: 'make it square' }, { mediaId: id, prompt: 'and this', edits: [{ type: 'mute' }] }]) {
        for (const res of [await run(bare, t, 'video.edit', input), await call(bare, 'POST', '/v1/estimates', { secret: t.secret, workspaceId: t.workspace.id, body: { operationId: 'video.edit', input } })]) {
          const error = assertError(res, 400, 'INVALID_INPUT');
          const [first] = error.details.errors as { pointer: string; message: string }[];
          assert.equal(first!.pointer, '/input/prompt');
          assert.match(first!.message, /map chat\.generate to an openai/);
        }
      }
      assert.equal(assertOk(await call(bare, 'GET', '/v1/jobs', { secret: t.secret, workspaceId: t.workspace.id })).data.items.length, 0, 'no job');
      const holds = await bare.deps.db.selectFrom('credit_holds').select('id').where('workspace_id', '=', t.workspace.id).execute();
      assert.equal(holds.length, 0, 'no hold was ever written');
      await assertMoney(bare, t, 0);
    });

    test('a test key plans with the simulated chat model: deterministic steps, nothing reaches the provider or ffmpeg', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS, mode: 'test' });
      const id = await uploadVideo(ctx, t, 1);
      fake.reset();
      const runsBefore = ffmpegRuns();
      const res = await run(ctx, t, 'video.edit', { mediaId: id, prompt: 'make it square and silent, as a gif' });
      assert.equal(res.statusCode, 202, res.body);
      await drain(ctx);
      const job = await getJob(ctx, t, res.json().data.jobId);
      assert.equal(job.status, 'completed', JSON.stringify(job));
      const result: any = JSON.parse((await readCompleteOutput(ctx, t, job.id)).bytes.toString('utf8'));
      assertResultShape(result);
      assert.deepEqual(result.steps, [{ type: 'mute' }, { type: 'resize', width: 512, height: 512, fit: 'cover' }, { type: 'format', container: 'gif' }]);
      assert.equal(result.provider, 'simulated');
      assert.equal(chatRequests().length, 0);
      assert.equal(ffmpegRuns(), runsBefore);
      await assertMoney(ctx, t, job.costMillicents);
    });
  });
}
