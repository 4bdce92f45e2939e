/**
 * Workspace voices (issue 37 item 1): voice.clone stores a voice of the workspace and mode (its
 * reference audio as workspace media with its sha256, the provider and model that cloned it), GET
 * /v1/voices lists it, speech.generate speaks with it as `voiceId` on a provider that takes
 * reference voices, and DELETE /v1/voices/{id} removes it.
 *
 * Two deployments per database:
 * - the simulated provider for test keys, and for live keys voice.clone on the fake Replicate
 *   (support/live-backend.ts) and speech.generate on a Replicate model that takes no speaker
 *   audio: test keys speak with voices, live keys' speech refuses `voiceId` at admission;
 * - the fake Replicate (test/support/fake-replicate.ts) cloning voices and speaking with a
 *   speaker-audio model (XTTS-v2 style, `"speaker": "{{voiceId}}"`, data URIs): the bytes the
 *   fake receives are the stored reference audio.
 * Refusals: another workspace's or mode's voice 404, an unknown or deleted one 400 naming the
 * field, a provider without voices 400 naming the field, each before any job, hold or ledger row;
 * ledger invariants after each test.
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { testScopeOf } from '../../src/lib/livemode.js';
import { call, createTestContext, describeEachDatabase, disposeTestContext, testKeySuite, type TestContext } from '../support/harness.js';
import { balance, drain, getJob, run } from '../support/jobs.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { seedKey, seedTenant, type Tenant } from '../support/seed.js';
import { sha256, wav } from '../support/media.js';
import { seedVoice } from '../support/voices.js';
import { assertError } from '../support/assertions.js';
import { checkRefusals } from '../support/openapi-responses.js';
import { writeProvidersFile } from '../support/providers-file.js';
import { FakeReplicate } from '../support/fake-replicate.js';
import { callTool, connectClient } from '../support/mcp-client.js';
import { testDatabaseNames } from '../support/databases.js';

const TOKEN = 'r8_operator_token_voices_0123456789';
const SPEECH = (voiceId?: string) => ({ text: 'Hello from a cloned voice.', format: 'wav', ...(voiceId ? { voiceId } : {}) });

type Caller = Pick<Tenant, 'secret' | 'workspace'>;

/** The same workspace through a test key of its own (its test twin). */
async function testKeyOf(ctx: TestContext, t: Tenant): Promise<Caller> {
  const { secret } = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { mode: 'test' });
  return { secret, workspace: t.workspace };
}

const voicesOf = async (ctx: TestContext, c: Caller) => {
  const res = await call(ctx, 'GET', '/v1/voices', { secret: c.secret, workspaceId: c.workspace.id });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data as { items: Record<string, unknown>[]; nextCursor: string | null };
};

/** The next prediction of the fake Replicate of `{ live }` clones a voice (its sample as the output). */
function liveClone(ctx: TestContext): void {
  ctx.live!.replicate.next({ output: ctx.live!.replicate.putFile('sample.wav', wav(2000)), predictTime: 1 });
}

/** What a refused run must not have left in a workspace scope: jobs, holds, ledger entries. */
async function footprint(ctx: TestContext, scopeId: string) {
  const count = async (table: 'jobs' | 'credit_holds' | 'credit_transactions') =>
    Number((await ctx.deps.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('workspace_id', '=', scopeId).executeTakeFirstOrThrow()).n);
  return { jobs: await count('jobs'), holds: await count('credit_holds'), ledger: await count('credit_transactions') };
}

/** Runs speech.generate and asserts the refusal, that nothing was admitted, and the error's pointer. */
async function refusedSpeech(ctx: TestContext, c: Caller, scopeId: string, voiceId: string, status: number, code: string): Promise<any> {
  const before = await footprint(ctx, scopeId);
  const body = assertError(await run(ctx, c, 'speech.generate', SPEECH(voiceId)), status, code);
  assert.deepEqual(await footprint(ctx, scopeId), before, `${code}: no job, hold or ledger entry`);
  return body;
}

function pointerOf(body: any): string[] {
  return (body.details?.errors ?? []).map((e: { pointer: string }) => e.pointer);
}

/** Live keys' providers file of the first deployment: speech.generate on a model that takes no speaker audio. */

describeEachDatabase(
  'workspace voices on the simulated provider',
  (get) => {
    // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
    before(() => checkRefusals(get().app));

    test('a cloned voice is listed with its reference audio and speaks: speech.generate with voiceId completes with it (test key)', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const tk = await testKeyOf(ctx, t);
      const reference = wav(6000);
      const voice = await seedVoice(ctx, tk, { name: 'Narrator', reference });

      const { items } = await voicesOf(ctx, tk);
      assert.equal(items.length, 1);
      const listed = items[0]!;
      assert.equal(listed.id, voice.voiceId);
      assert.equal(listed.workspaceId, t.workspace.id, 'the public workspace id, never the twin');
      assert.equal(listed.livemode, false);
      assert.equal(listed.name, 'Narrator');
      assert.equal(listed.referenceMediaId, voice.referenceMediaId);
      assert.equal(listed.referenceSha256, sha256(reference), 'the reference audio with its sha256');
      assert.equal(listed.provider, 'simulated');
      assert.equal(listed.jobId, voice.jobId);
      const one = await call(ctx, 'GET', `/v1/voices/${voice.voiceId}`, { secret: tk.secret, workspaceId: t.workspace.id });
      assert.equal(one.statusCode, 200, one.body);
      assert.deepEqual(one.json().data, listed);
      const row = await ctx.deps.db.selectFrom('voices').selectAll().where('id', '=', voice.voiceId).executeTakeFirstOrThrow();
      assert.equal(row.workspace_id, testScopeOf(t.workspace.id), 'stored in the test twin');
      assert.match(String(row.provider_voice_id), /^sim-voice-/, "the provider's own id of the clone is kept");

      // The tools list offers voiceId to the test key (its speech runs on the simulated provider).
      const tools = (await call(ctx, 'GET', '/v1/tools', { secret: tk.secret, workspaceId: t.workspace.id })).json().data.items;
      const speech = tools.flatMap((x: any) => x.operations).find((o: any) => o.operationId === 'speech.generate');
      assert.ok(speech.inputSchema.properties.voiceId, 'speech.generate takes voiceId here');

      const res = await run(ctx, tk, 'speech.generate', SPEECH(voice.voiceId.toUpperCase()));
      assert.equal(res.statusCode, 202, res.body);
      await drain(ctx);
      const job = await getJob(ctx, tk, res.json().data.jobId);
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.equal(job.output.voiceId, voice.voiceId, 'the result names the voice it spoke with');
      assert.ok(job.output.audio.mediaId);
      await assertLedgerInvariants(ctx.deps, testScopeOf(t.workspace.id));
    });

    test("another workspace's voice is 404 (runs, estimates, reads, deletes); an unknown or deleted id is 400 naming voiceId; nothing is held", async () => {
      const ctx = get();
      const a = await testKeyOf(ctx, await seedTenant(ctx.deps));
      const b = await testKeyOf(ctx, await seedTenant(ctx.deps));
      const aVoice = await seedVoice(ctx, a);
      const bScope = testScopeOf(b.workspace.id);

      const foreign = await refusedSpeech(ctx, b, bScope, aVoice.voiceId, 404, 'NOT_FOUND');
      assert.doesNotMatch(JSON.stringify(foreign), new RegExp(a.workspace.id), "the other workspace is not named");
      assertError(await call(ctx, 'POST', '/v1/estimates', { secret: b.secret, workspaceId: b.workspace.id, body: { operationId: 'speech.generate', input: SPEECH(aVoice.voiceId) } }), 404, 'NOT_FOUND');
      assertError(await call(ctx, 'GET', `/v1/voices/${aVoice.voiceId}`, { secret: b.secret, workspaceId: b.workspace.id }), 404, 'NOT_FOUND');
      assertError(await call(ctx, 'DELETE', `/v1/voices/${aVoice.voiceId}`, { secret: b.secret, workspaceId: b.workspace.id }), 404, 'NOT_FOUND');
      assert.deepEqual((await voicesOf(ctx, b)).items, []);
      assert.equal((await voicesOf(ctx, a)).items.length, 1, "B's delete did not touch A's voice");

      const unknown = await refusedSpeech(ctx, b, bScope, randomUUID(), 400, 'INVALID_INPUT');
      assert.deepEqual(pointerOf(unknown), ['/input/voiceId']);
      const estimate = assertError(await call(ctx, 'POST', '/v1/estimates', { secret: b.secret, workspaceId: b.workspace.id, body: { operationId: 'speech.generate', input: SPEECH(randomUUID()) } }), 400, 'INVALID_INPUT');
      assert.deepEqual(pointerOf(estimate), ['/input/voiceId']);
      const twice = assertError(await run(ctx, a, 'speech.generate', { ...SPEECH(aVoice.voiceId), voice: 'alloy' }), 400, 'INVALID_INPUT');
      assert.deepEqual(pointerOf(twice), ['/input/voiceId'], 'voice and voiceId together');
      await assertLedgerInvariants(ctx.deps, testScopeOf(a.workspace.id));
      await assertLedgerInvariants(ctx.deps, bScope);
    });

    test("another mode's voice is 404: a live voice for a test key, a test voice not listed or deletable by a live key", async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { credits: 1_000_000 });
      const tk = await testKeyOf(ctx, t);
      liveClone(ctx);
      const liveVoice = await seedVoice(ctx, t, { name: 'Live voice' });
      const testVoice = await seedVoice(ctx, tk, { name: 'Test voice' });

      await refusedSpeech(ctx, tk, testScopeOf(t.workspace.id), liveVoice.voiceId, 404, 'NOT_FOUND');
      assertError(await call(ctx, 'GET', `/v1/voices/${liveVoice.voiceId}`, { secret: tk.secret, workspaceId: t.workspace.id }), 404, 'NOT_FOUND');
      assertError(await call(ctx, 'GET', `/v1/voices/${testVoice.voiceId}`, { secret: t.secret, workspaceId: t.workspace.id }), 404, 'NOT_FOUND');
      assertError(await call(ctx, 'DELETE', `/v1/voices/${testVoice.voiceId}`, { secret: t.secret, workspaceId: t.workspace.id }), 404, 'NOT_FOUND');
      const live = await voicesOf(ctx, t);
      const test = await voicesOf(ctx, tk);
      assert.deepEqual(live.items.map((v) => [v.id, v.livemode]), [[liveVoice.voiceId, true]]);
      assert.deepEqual(test.items.map((v) => [v.id, v.livemode]), [[testVoice.voiceId, false]]);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
      await assertLedgerInvariants(ctx.deps, testScopeOf(t.workspace.id));
    });

    test('a speech provider that takes no reference voice refuses voiceId at admission (400 naming the field), before any hold or charge; the tools list leaves it out', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { credits: 1_000_000 });
      liveClone(ctx);
      const voice = await seedVoice(ctx, t);
      const before = await balance(ctx, t);
      const body = await refusedSpeech(ctx, t, t.workspace.id, voice.voiceId, 400, 'INVALID_INPUT');
      assert.deepEqual(pointerOf(body), ['/input/voiceId']);
      assert.match(body.message, /cannot speak with a workspace voice/);
      assert.match(body.message, /plainrep, model owner\/plain-tts/, 'names the route that cannot');
      assert.deepEqual(await balance(ctx, t), before, 'nothing held or charged');
      const estimate = assertError(await call(ctx, 'POST', '/v1/estimates', { secret: t.secret, workspaceId: t.workspace.id, body: { operationId: 'speech.generate', input: SPEECH(voice.voiceId) } }), 400, 'INVALID_INPUT');
      assert.deepEqual(pointerOf(estimate), ['/input/voiceId']);
      const tools = (await call(ctx, 'GET', '/v1/tools', { secret: t.secret, workspaceId: t.workspace.id })).json().data.items;
      const speech = tools.flatMap((x: any) => x.operations).find((o: any) => o.operationId === 'speech.generate');
      assert.equal(speech.inputSchema.properties.voiceId, undefined, "the live route's schema has no voiceId");
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('a deleted voice is gone from the list and reads, refused by runs (400), and fails the jobs queued before VOICE_DELETED, charged nothing; its reference audio stays', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const tk = await testKeyOf(ctx, t);
      const scope = testScopeOf(t.workspace.id);
      const voice = await seedVoice(ctx, tk);
      const kept = await seedVoice(ctx, tk, { name: 'Kept' });
      const queued = await run(ctx, tk, 'speech.generate', SPEECH(voice.voiceId));
      assert.equal(queued.statusCode, 202, queued.body);
      const held = await balance(ctx, tk);
      assert.ok(held.reservedMillicents > 0, 'the queued job holds its maximum');

      const del = await call(ctx, 'DELETE', `/v1/voices/${voice.voiceId}`, { secret: tk.secret, workspaceId: t.workspace.id });
      assert.equal(del.statusCode, 200, del.body);
      assert.deepEqual(del.json().data, { id: voice.voiceId, deleted: true });
      assert.deepEqual((await voicesOf(ctx, tk)).items.map((v) => v.id), [kept.voiceId]);
      assertError(await call(ctx, 'GET', `/v1/voices/${voice.voiceId}`, { secret: tk.secret, workspaceId: t.workspace.id }), 404, 'NOT_FOUND');
      assertError(await call(ctx, 'DELETE', `/v1/voices/${voice.voiceId}`, { secret: tk.secret, workspaceId: t.workspace.id }), 404, 'NOT_FOUND');
      const refused = await refusedSpeech(ctx, tk, scope, voice.voiceId, 400, 'INVALID_INPUT');
      assert.deepEqual(pointerOf(refused), ['/input/voiceId']);
      assert.match(JSON.stringify(refused.details), /deleted/);

      await drain(ctx);
      const job = await getJob(ctx, tk, queued.json().data.jobId);
      assert.equal(job.status, 'failed');
      assert.equal(job.errorCode, 'VOICE_DELETED');
      assert.equal(job.costMillicents, 0, 'nothing reached a provider, nothing is charged');
      assert.equal((await balance(ctx, tk)).reservedMillicents, 0, 'its hold is released');
      const media = await call(ctx, 'GET', `/v1/media/${voice.referenceMediaId}`, { secret: tk.secret, workspaceId: t.workspace.id });
      assert.equal(media.statusCode, 200, 'the reference audio stays a media item');
      await assertLedgerInvariants(ctx.deps, scope);
    });

    test('MCP: service_voices_list, service_voices_get and service_voices_delete answer as REST; the run tool takes voiceId', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const { secret } = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { mode: 'test', transports: ['rest', 'mcp'] });
      const tk = { secret, workspace: t.workspace };
      const voice = await seedVoice(ctx, tk);
      const client = await connectClient(ctx, secret);
      try {
        const { tools } = await client.listTools();
        for (const name of ['service_voices_list', 'service_voices_get', 'service_voices_delete']) assert.ok(tools.some((x) => x.name === name), `${name} is offered`);
        const speech = tools.find((x) => x.name === 'service_run_speech_generate')!;
        assert.ok(speech.inputSchema.properties!.voiceId, 'the speech run tool takes voiceId');
        const listed = await callTool(client, 'service_voices_list', { workspaceId: t.workspace.id });
        assert.equal(listed.isError, false);
        assert.deepEqual(listed.body.data, (await voicesOf(ctx, tk)));
        const one = await callTool(client, 'service_voices_get', { workspaceId: t.workspace.id, voiceId: voice.voiceId });
        assert.equal(one.body.data.id, voice.voiceId);
        const spoken = await callTool(client, 'service_run_speech_generate', { workspaceId: t.workspace.id, text: 'Over MCP.', voiceId: voice.voiceId });
        assert.equal(spoken.isError, false, JSON.stringify(spoken.body));
        const deleted = await callTool(client, 'service_voices_delete', { workspaceId: t.workspace.id, voiceId: voice.voiceId });
        assert.deepEqual(deleted.body.data, { id: voice.voiceId, deleted: true });
        const again = await callTool(client, 'service_voices_delete', { workspaceId: t.workspace.id, voiceId: voice.voiceId });
        assert.equal(again.isError, true);
        assert.equal(again.status, 404);
      } finally {
        await client.close();
      }
      await drain(ctx);
      await assertLedgerInvariants(ctx.deps, testScopeOf(t.workspace.id));
    });

    test('a voice name is stored and shown without control characters (PostgreSQL text refuses NUL; runs-inputs-fuzz found it)', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const tk = await testKeyOf(ctx, t);
      const voice = await seedVoice(ctx, tk, { name: '\u0000 Nar\nrator\u0007 ' });
      assert.deepEqual((await voicesOf(ctx, tk)).items.map((v) => v.name), ['Narrator']);
      assert.equal((await getJob(ctx, tk, voice.jobId)).output.voice.name, 'Narrator', 'the result names it as stored');
      const blank = await seedVoice(ctx, tk, { name: '\u0000\u0001' });
      assert.equal((await getJob(ctx, tk, blank.jobId)).output.voice.name, 'Voice', 'nothing left: a default name');
      await assertLedgerInvariants(ctx.deps, testScopeOf(t.workspace.id));
    });

    test('GET /v1/voices pages newest first with an opaque cursor of its workspace and mode', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const tk = await testKeyOf(ctx, t);
      const made = [];
      for (let i = 0; i < 3; i++) made.push((await seedVoice(ctx, tk, { name: `Voice ${i}` })).voiceId);
      const first = await call(ctx, 'GET', '/v1/voices', { secret: tk.secret, workspaceId: t.workspace.id, query: { limit: '2' } });
      const page1 = first.json().data;
      assert.deepEqual(page1.items.map((v: { id: string }) => v.id), [made[2], made[1]]);
      assert.equal(typeof page1.nextCursor, 'string');
      const page2 = (await call(ctx, 'GET', '/v1/voices', { secret: tk.secret, workspaceId: t.workspace.id, query: { limit: '2', cursor: page1.nextCursor } })).json().data;
      assert.deepEqual(page2.items.map((v: { id: string }) => v.id), [made[0]]);
      assert.equal(page2.nextCursor, null);
      // The live key's list is another list: the test cursor is not its own.
      assertError(await call(ctx, 'GET', '/v1/voices', { secret: t.secret, workspaceId: t.workspace.id, query: { cursor: page1.nextCursor } }), 400, 'INVALID_CURSOR');
      await assertLedgerInvariants(ctx.deps, testScopeOf(t.workspace.id));
    });
  },
  testKeySuite({
    // Live keys: voice.clone on the fake Replicate (support/live-backend.ts), and speech.generate on
    // a Replicate model that takes no speaker audio (never called here: voiceId is refused at
    // admission).
    live: {
      file: ({ replicate }) => ({
        providers: {
          rep: { type: 'replicate', baseUrl: replicate.baseUrl, apiKeyEnv: 'LIVE_REPLICATE_TOKEN', privateNetwork: true },
          plainrep: { type: 'replicate', baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: 'VOICES_PLAIN_TOKEN', privateNetwork: true },
        },
        operations: {
          'voice.clone': { provider: 'rep', model: 'owner/voice-clone', input: { audio: '{{referenceMediaIds}}', name: '{{name}}' }, price: { perRunMillicents: 5000 }, pollIntervalMs: 20 },
          'speech.generate': { provider: 'plainrep', model: 'owner/plain-tts', input: { text: '{{text}}' }, price: { perThousandCharactersMillicents: 1000 } },
        },
      }),
    },
    env: { VOICES_PLAIN_TOKEN: TOKEN },
  }),
);

for (const dbName of testDatabaseNames()) {
  describe(`workspace voices on Replicate (fake) [${dbName}]`, () => {
    let fake: FakeReplicate;
    let ctx: TestContext;
    let dir: string;

    before(async () => {
      fake = await FakeReplicate.start();
      dir = mkdtempSync(join(tmpdir(), 'was-voices-replicate-'));
      const provider = { type: 'replicate', baseUrl: fake.baseUrl, apiKeyEnv: 'VOICES_REPLICATE_TOKEN', privateNetwork: true };
      const file = writeProvidersFile(dir, 'providers.json', {
        providers: { rep: provider, repdata: { ...provider, mediaInputs: 'dataUri' } },
        operations: {
          'voice.clone': {
            provider: 'rep',
            model: 'owner/voice-clone',
            input: { audio: '{{referenceMediaIds}}', name: '{{name}}' },
            price: { perRunMillicents: 5000 },
            pollIntervalMs: 20,
          },
          // An XTTS-v2 style model: the voice's reference audio goes in as `speaker`.
          'speech.generate': {
            provider: 'repdata',
            model: 'owner/xtts-v2',
            input: { text: '{{text}}', speaker: '{{voiceId}}', language: 'en' },
            price: { perThousandCharactersMillicents: 1000, perPredictSecondMillicents: 10 },
            pollIntervalMs: 20,
          },
        },
      });
      ctx = await createTestContext(dbName, { env: { PROVIDERS_FILE: file, VOICES_REPLICATE_TOKEN: TOKEN, SIMULATE_LIVE: 'false' } });
      await checkRefusals(ctx.app);
    });

    after(async () => {
      if (ctx) await disposeTestContext(ctx);
      await fake?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    beforeEach(() => fake.reset());

    test('a voice cloned on Replicate then used by speech.generate reaches the speaker-audio model with the stored reference bytes intact', async () => {
      const t = await seedTenant(ctx.deps, { credits: 1_000_000 });
      const reference = wav(7000);
      fake.defaultScript = { output: fake.putFile('sample.wav', wav(2000)), predictTime: 1 };
      const voice = await seedVoice(ctx, t, { name: 'Studio', reference });
      const clone = fake.calls('create');
      assert.equal(clone.length, 1);
      assert.equal(clone[0]!.path, '/v1/models/owner/voice-clone/predictions');
      const cloneId = fake.last!.id;

      const row = await ctx.deps.db.selectFrom('voices').selectAll().where('id', '=', voice.voiceId).executeTakeFirstOrThrow();
      assert.equal(row.workspace_id, t.workspace.id);
      assert.equal(row.provider, 'rep');
      assert.equal(row.model, 'owner/voice-clone');
      assert.equal(row.provider_voice_id, cloneId, "the prediction is the provider's id of the clone");
      assert.equal(row.reference_sha256, sha256(reference));
      const cloneJob = await getJob(ctx, t, voice.jobId);
      assert.equal(cloneJob.output.voice.id, voice.voiceId, 'the result names the workspace voice, not the prediction');
      assert.equal(cloneJob.output.predictionId, cloneId);

      fake.reset();
      const speech = wav(3000);
      fake.defaultScript = { output: fake.putFile('speech.wav', speech), predictTime: 2 };
      const res = await run(ctx, t, 'speech.generate', SPEECH(voice.voiceId));
      assert.equal(res.statusCode, 202, res.body);
      await drain(ctx);
      const job = await getJob(ctx, t, res.json().data.jobId);
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.equal(fake.creations, 1);
      const sent = fake.last!.input;
      assert.equal(sent.text, SPEECH().text);
      assert.equal(sent.language, 'en');
      const m = /^data:([^;,]+);base64,(.*)$/s.exec(String(sent.speaker));
      assert.ok(m, `speaker is a data URI (${String(sent.speaker).slice(0, 40)}…)`);
      assert.equal(m[1], 'audio/wav');
      const received = Buffer.from(m[2]!, 'base64');
      assert.equal(sha256(received), row.reference_sha256, 'the bytes the provider received are the stored reference audio');
      assert.ok(received.equals(reference));
      assert.equal(job.output.voiceId, voice.voiceId);
      assert.equal(job.output.audio.sha256, sha256(speech));
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test("cross-workspace and cross-mode voice ids are refused (404) before any prediction, hold or charge; a run without voiceId sends no speaker", async () => {
      const a = await seedTenant(ctx.deps, { credits: 1_000_000 });
      const b = await seedTenant(ctx.deps, { credits: 1_000_000 });
      fake.defaultScript = { output: fake.putFile('sample.wav', wav(2000)), predictTime: 1 };
      const aVoice = await seedVoice(ctx, a);
      const aTest = await testKeyOf(ctx, a);
      const testVoice = await seedVoice(ctx, aTest, { name: 'Test voice' });
      fake.reset();

      await refusedSpeech(ctx, b, b.workspace.id, aVoice.voiceId, 404, 'NOT_FOUND');
      await refusedSpeech(ctx, a, a.workspace.id, testVoice.voiceId, 404, 'NOT_FOUND');
      await refusedSpeech(ctx, aTest, testScopeOf(a.workspace.id), aVoice.voiceId, 404, 'NOT_FOUND');
      const unknown = await refusedSpeech(ctx, a, a.workspace.id, randomUUID(), 400, 'INVALID_INPUT');
      assert.deepEqual(pointerOf(unknown), ['/input/voiceId']);
      assert.equal(fake.creations, 0, 'no refused run reached the provider');

      fake.defaultScript = { output: fake.putFile('plain.wav', wav(1000)), predictTime: 1 };
      const plain = await run(ctx, a, 'speech.generate', SPEECH());
      assert.equal(plain.statusCode, 202, plain.body);
      await drain(ctx);
      assert.equal((await getJob(ctx, a, plain.json().data.jobId)).status, 'completed');
      assert.equal('speaker' in fake.last!.input, false, 'no voice: the template leaves speaker out');
      for (const scope of [a.workspace.id, b.workspace.id, testScopeOf(a.workspace.id)]) await assertLedgerInvariants(ctx.deps, scope);
    });
  });
}
