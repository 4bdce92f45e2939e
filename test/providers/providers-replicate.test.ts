/**
 * The replicate adapter against a local fake of the Replicate predictions API
 * (test/support/fake-replicate.ts), end to end: runs admitted over the public API, executed by
 * the job worker, files stored as workspace media, money settled in the ledger.
 *
 * Checked: one prediction created and polled; the route's input template (fields substituted,
 * constants as written, absent fields left out, no template: the operation input); media inputs
 * as signed URLs (or data URIs) whose bytes are the upload; output files downloaded from the
 * provider's origin (with the key) or another allowed origin (without it), sniffed and stored
 * with their sha256; usage-based cost (images, seconds, characters, predict_time); personal
 * provider keys; 401, 429, 5xx; failed predictions and wrong file types charged for consumed
 * work; the prediction deadline; job cancellation cancelling the prediction; a retry creating a
 * new prediction; and a worker killed with SIGKILL mid-prediction: the recovered attempt
 * attaches to the same prediction (exactly one creation).
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Deps } from '../../src/deps.js';
import { systemClock } from '../../src/lib/clock.js';
import { sumOpenHolds } from '../../src/modules/billing/store.js';
import { JobWorker } from '../../src/worker/job-worker.js';
import { createTestDatabase, testDatabaseNames, type TestDatabase } from '../support/databases.js';
import { admin, call, createTestContext, disposeTestContext, type TestContext } from '../support/harness.js';
import { balance, drain, getJob, run } from '../support/jobs.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { seedTenant, type Tenant } from '../support/seed.js';
import { FakeReplicate } from '../support/fake-replicate.js';
import { mp3, mp4, png, sha256, upload, wav } from '../support/media.js';
import { httpJson, type HttpTenant, PROCESS_SECRET_KEY, readJob, seedTenantOverHttp, type ServerProcess, startServer } from '../support/processes.js';
import { waitUntil } from '../support/wait.js';
import { needsDist } from '../support/requirements.js';

const OPERATOR_TOKEN = 'r8_operator_token_0123456789abcdef';
const PERSONAL_TOKEN = 'r8_personal_token_fedcba9876543210';
const VERSION = '5c7d5dc6dd8bf75c1acaa8565735e7986bc5b66206b55cca93cb72c9bf15ccaa';
const CREDITS = 1_000_000;

function providersFile(fake: FakeReplicate) {
  const provider = { type: 'replicate', baseUrl: fake.baseUrl, apiKeyEnv: 'FAKE_REPLICATE_TOKEN', privateNetwork: true };
  return {
    providers: {
      rep: provider,
      repdata: { ...provider, mediaInputs: 'dataUri' },
    },
    operations: {
      'image.generate': {
        provider: 'rep',
        model: 'owner/img',
        input: {
          prompt: '{{prompt}}',
          num_outputs: '{{count}}',
          image: '{{referenceMediaIds}}',
          // Elements of a list field, for models that take one image: a missing one is left out.
          first_image: '{{referenceMediaIds.0}}',
          sixth_image: '{{referenceMediaIds.5}}',
          guidance_scale: 7.5,
          scheduler: 'K_EULER',
          extra: { seed: 42, tags: ['fixed', '{{prompt}}', '{{width}}'], note: 'sent as written' },
        },
        price: { perImageMillicents: 4000, perPredictSecondMillicents: 10 },
        pollIntervalMs: 20,
      },
      'background.remove': {
        provider: 'repdata',
        model: 'owner/bg',
        input: { image: '{{mediaId}}', mode: 'fast' },
        price: { perRunMillicents: 300, perPredictSecondMillicents: 10 },
        pollIntervalMs: 20,
      },
      'video.generate': {
        provider: 'rep',
        model: `owner/vid:${VERSION}`,
        input: { prompt: '{{prompt}}', duration: '{{durationSeconds}}' },
        price: { perSecondMillicents: 1000, perPredictSecondMillicents: 10 },
        pollIntervalMs: 20,
      },
      'music.generate': {
        provider: 'rep',
        model: 'owner/music',
        input: { prompt: '{{prompt}}' },
        price: { perSecondMillicents: 10, perPredictSecondMillicents: 100 },
        timeoutSeconds: 1,
        pollIntervalMs: 20,
      },
      'speech.generate': {
        provider: 'rep',
        model: 'owner/tts',
        price: { perThousandCharactersMillicents: 1000, perPredictSecondMillicents: 10 },
        pollIntervalMs: 20,
      },
    },
  };
}

async function admitted(ctx: TestContext, t: Tenant, operationId: string, input: Record<string, unknown>): Promise<string> {
  const res = await run(ctx, t, operationId, input);
  assert.equal(res.statusCode, 202, res.body);
  return res.json().data.jobId as string;
}

/** Admits a run, drains the queue, and returns the job's snapshot. */
async function runToEnd(ctx: TestContext, t: Tenant, operationId: string, input: Record<string, unknown>) {
  const jobId = await admitted(ctx, t, operationId, input);
  await drain(ctx);
  return getJob(ctx, t, jobId);
}

async function uploaded(ctx: TestContext, t: Tenant, bytes: Buffer): Promise<string> {
  const res = await upload(ctx, t, bytes, { type: 'image/png', filename: 'ref.png' });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data.id as string;
}

/** Reads a signed media URL the way the provider would (the app is not listening: inject its path). */
async function fetchSigned(ctx: TestContext, url: string): Promise<Buffer> {
  const u = new URL(url);
  const res = await ctx.app.inject({ method: 'GET', url: `${u.pathname}${u.search}` });
  assert.equal(res.statusCode, 200, `signed URL answered ${res.statusCode}`);
  return res.rawPayload;
}

async function jobRow(ctx: TestContext, jobId: string) {
  return ctx.deps.db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
}

async function usageOf(deps: Pick<Deps, 'db'>, jobId: string) {
  const rows = await deps.db.selectFrom('credit_transactions').select(['type', 'amount_mc']).where('job_id', '=', jobId).execute();
  return rows.map((r) => [r.type, Number(r.amount_mc)]);
}

for (const dbName of testDatabaseNames()) {
  describe(`replicate provider [${dbName}]`, () => {
    let fake: FakeReplicate;
    let ctx: TestContext;
    let dir: string;
    let image: Buffer;

    before(async () => {
      fake = await FakeReplicate.start();
      dir = mkdtempSync(join(tmpdir(), 'was-replicate-'));
      const file = join(dir, 'providers.json');
      writeFileSync(file, JSON.stringify(providersFile(fake)));
      ctx = await createTestContext(dbName, {
        // 127.0.0.2 is the fake's second origin: allowed as if it were a public file host.
        env: { PROVIDERS_FILE: file, FAKE_REPLICATE_TOKEN: OPERATOR_TOKEN, JOB_LEASE_MS: '1000', EGRESS_ALLOW_CIDRS: '127.0.0.2/32' },
      });
      image = await png(24, 20);
    });

    after(async () => {
      if (ctx) await disposeTestContext(ctx);
      await fake?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    beforeEach(() => fake.reset());

    test('one prediction is created and polled to its end; the template substitutes fields, sends constants as written and leaves absent fields out', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      fake.defaultScript = { polls: 3, output: [fake.putFile('one.png', image)], predictTime: 1, logs: 'loading\n 40%|████      | 4/10 [00:01<00:01]\n' };
      const job = await runToEnd(ctx, t, 'image.generate', { prompt: 'a red fox', count: 1 });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.equal(fake.creations, 1);
      assert.equal(fake.calls('create').length, 1);
      const create = fake.calls('create')[0]!;
      assert.equal(create.path, '/v1/models/owner/img/predictions', 'model without version: the model endpoint');
      const { width } = JSON.parse((await jobRow(ctx, job.id)).input_json) as { width?: number };
      const tags = width === undefined ? ['fixed', 'a red fox'] : ['fixed', 'a red fox', width];
      assert.deepEqual(create.json, {
        input: { prompt: 'a red fox', num_outputs: 1, guidance_scale: 7.5, scheduler: 'K_EULER', extra: { seed: 42, tags, note: 'sent as written' } },
      });
      assert.equal('image' in create.json.input, false, 'an absent media field is left out');
      const id = fake.last!.id;
      const polls = fake.calls('get');
      assert.ok(polls.length >= 4, `polled until it ended (${polls.length} polls)`);
      assert.ok(polls.every((p) => p.path === `/v1/predictions/${id}`));
      assert.equal(fake.cancels.length, 0, 'a prediction that ended is not cancelled');
      assert.equal(job.output.provider, 'rep');
      assert.equal(job.output.model, 'owner/img');
      assert.equal(job.output.predictionId, id);
      const versions = await ctx.deps.db.selectFrom('job_versions').select('snapshot_json').where('job_id', '=', job.id).execute();
      const progress = versions.map((v) => (JSON.parse(v.snapshot_json) as { progress: { percentage: number } }).progress.percentage);
      assert.ok(progress.includes(40), `the progress bar in the logs is reported (${progress.join(',')})`);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('media inputs reach the model as signed URLs whose bytes are the upload; output files are sniffed and stored with their sha256; cost is per image plus predict_time', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const ref1 = await uploaded(ctx, t, image);
      const other = await png(8, 8);
      const ref2 = await uploaded(ctx, t, other);
      const out1 = await png(32, 32);
      const out2 = await png(40, 30);
      fake.defaultScript = { output: [fake.putFile('out-1.png', out1), fake.putFile('out-2.png', out2, 'other')], predictTime: 3.2 };
      const before = await balance(ctx, t);
      const job = await runToEnd(ctx, t, 'image.generate', { prompt: 'two cats', count: 2, referenceMediaIds: [ref1, ref2] });
      assert.equal(job.status, 'completed', JSON.stringify(job));

      const sent = fake.last!.input.image as string[];
      assert.ok(Array.isArray(sent) && sent.length === 2, 'a list stays a list');
      assert.ok(sent.every((u) => /^https?:\/\//.test(u)), 'signed download URLs');
      assert.equal(sha256(await fetchSigned(ctx, sent[0]!)), sha256(image));
      assert.equal(sha256(await fetchSigned(ctx, sent[1]!)), sha256(other));
      assert.equal(typeof fake.last!.input.first_image, 'string', '"{{referenceMediaIds.0}}" is one URL, not a list');
      assert.equal(sha256(await fetchSigned(ctx, fake.last!.input.first_image as string)), sha256(image));
      assert.equal('sixth_image' in fake.last!.input, false, 'an element past the end of the list is left out');

      const images = job.output.images as { mediaId: string; sha256: string; mimeType: string }[];
      assert.equal(images.length, 2);
      assert.equal(images[0]!.sha256, sha256(out1));
      assert.equal(images[1]!.sha256, sha256(out2));
      assert.ok(images.every((i) => i.mimeType === 'image/png'));
      const rows = await ctx.deps.db.selectFrom('media').select(['id', 'sha256', 'mime_type']).where('job_id', '=', job.id).execute();
      assert.deepEqual(rows.map((r) => r.sha256).sort(), [sha256(out1), sha256(out2)].sort(), 'stored as workspace media');

      const files = fake.calls('file');
      const own = files.find((f) => f.server === 'own')!;
      const foreign = files.find((f) => f.server === 'other')!;
      assert.equal(own.headers.authorization, `Bearer ${OPERATOR_TOKEN}`, "the provider's own origin gets the key");
      assert.equal(foreign.headers.authorization, undefined, 'another origin never sees the key');

      assert.equal(job.costMillicents, 2 * 4000 + 10 * 4, '2 images + ceil(3.2) predict seconds');
      const afterwards = await balance(ctx, t);
      assert.equal(before.totalMillicents - afterwards.totalMillicents, job.costMillicents);
      assert.equal(afterwards.reservedMillicents, 0);
      assert.deepEqual(await usageOf(ctx.deps, job.id), [['usage', -job.costMillicents]]);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('with mediaInputs dataUri a media input reaches the model as a data URI whose decoded bytes are the upload', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const id = await uploaded(ctx, t, image);
      const cutout = await png(24, 20);
      fake.defaultScript = { output: fake.putFile('cutout.png', cutout), predictTime: 0.4 };
      const job = await runToEnd(ctx, t, 'background.remove', { mediaId: id });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      const sent = fake.last!.input;
      assert.equal(sent.mode, 'fast');
      const m = /^data:image\/png;base64,(.+)$/.exec(String(sent.image));
      assert.ok(m, 'a data URI of the media type');
      assert.equal(sha256(Buffer.from(m[1]!, 'base64')), sha256(image));
      assert.equal(job.output.image.sha256, sha256(cutout));
      assert.equal(job.costMillicents, 300 + 10);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('a versioned model is created through POST /predictions with its version; video cost is per second plus predict_time', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const video = mp4();
      fake.defaultScript = { output: fake.putFile('clip.mp4', video), predictTime: 7.5 };
      const job = await runToEnd(ctx, t, 'video.generate', { prompt: 'waves', durationSeconds: 3 });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      const create = fake.calls('create')[0]!;
      assert.equal(create.path, '/v1/predictions');
      assert.equal(create.json.version, VERSION);
      assert.deepEqual(create.json.input, { prompt: 'waves', duration: 3 });
      assert.equal(job.output.video.sha256, sha256(video));
      assert.equal(job.output.video.mimeType, 'video/mp4');
      assert.equal(job.costMillicents, 3 * 1000 + 10 * 8);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('without a template the operation input is sent as it is; speech is charged per character', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const audio = mp3();
      fake.defaultScript = { output: fake.putFile('speech.mp3', audio), predictTime: 0.2 };
      const text = 'Héllo wörld, 😀!';
      const job = await runToEnd(ctx, t, 'speech.generate', { text });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.deepEqual(fake.last!.input, JSON.parse((await jobRow(ctx, job.id)).input_json));
      assert.equal(job.output.audio.sha256, sha256(audio));
      assert.equal(job.costMillicents, [...text].length + 10);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('the operator key is sent as a Bearer token; a personal key stored under the provider name replaces it and the job costs no credits', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      fake.defaultScript = { output: [fake.putFile('p.png', image)], predictTime: 1 };
      const operatorJob = await runToEnd(ctx, t, 'image.generate', { prompt: 'operator', count: 1 });
      assert.equal(operatorJob.status, 'completed');
      assert.ok(fake.requests.filter((r) => r.server === 'own').every((r) => r.headers.authorization === `Bearer ${OPERATOR_TOKEN}`));

      const set = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/provider-keys`, { provider: 'rep', apiKey: PERSONAL_TOKEN });
      assert.equal(set.statusCode, 200, set.body);
      fake.reset();
      fake.defaultScript = { output: [fake.putFile('p.png', image)], predictTime: 1 };
      const before = await balance(ctx, t);
      const job = await runToEnd(ctx, t, 'image.generate', { prompt: 'personal', count: 1 });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      const own = fake.requests.filter((r) => r.server === 'own');
      assert.ok(own.length >= 3);
      assert.ok(own.every((r) => r.headers.authorization === `Bearer ${PERSONAL_TOKEN}`), 'every call carries the personal key');
      assert.equal(job.costMillicents, 0, 'funded by the provider key');
      assert.equal((await balance(ctx, t)).totalMillicents, before.totalMillicents);
      const row = await jobRow(ctx, job.id);
      assert.equal(JSON.stringify(row).includes(PERSONAL_TOKEN), false, 'the key is nowhere in the job');
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('401 from the provider fails the job PROVIDER_AUTH without retrying, and the key it echoes goes nowhere', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      fake.answer('create', { status: 401, json: { detail: `Invalid token: ${OPERATOR_TOKEN}` } });
      const job = await runToEnd(ctx, t, 'image.generate', { prompt: 'x', count: 1 });
      assert.equal(job.status, 'failed');
      assert.equal(job.errorCode, 'PROVIDER_AUTH');
      assert.equal(fake.calls('create').length, 1, '401 is not retried');
      assert.equal(job.costMillicents, 0);
      assert.equal(JSON.stringify(await jobRow(ctx, job.id)).includes(OPERATOR_TOKEN), false);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('429 is retried after Retry-After inside the attempt and the job then completes with one prediction', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      fake.answer('create', { status: 429, headers: { 'retry-after': '0.1' }, json: { detail: 'slow down' } });
      fake.defaultScript = { output: [fake.putFile('r.png', image)], predictTime: 1 };
      const job = await runToEnd(ctx, t, 'image.generate', { prompt: 'x', count: 1 });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      const creates = fake.calls('create');
      assert.equal(creates.length, 2);
      assert.ok(creates[1]!.at - creates[0]!.at >= 90, `waited ${creates[1]!.at - creates[0]!.at} ms as Retry-After said`);
      assert.equal(fake.creations, 1);
      assert.equal(job.costMillicents, 4000 + 10);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('a 5xx on create is not retried (the prediction may exist after all) and fails the job PROVIDER_ERROR, charging nothing', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const busy = { status: 503, headers: { 'retry-after': '0' }, json: { detail: 'unavailable' } };
      fake.answer('create', busy, busy);
      const before = await balance(ctx, t);
      const job = await runToEnd(ctx, t, 'image.generate', { prompt: 'x', count: 1 });
      assert.equal(job.status, 'failed');
      assert.equal(job.errorCode, 'PROVIDER_ERROR');
      assert.equal(fake.calls('create').length, 1, 'a second create could pay for a second prediction');
      assert.equal(fake.creations, 0);
      assert.equal(job.costMillicents, 0);
      assert.deepEqual(await balance(ctx, t), before);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('5xx answers to polls are retried (maxRetries 2) and the job completes; exhausted, they fail it PROVIDER_ERROR with the prediction cancelled', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const busy = { status: 502, headers: { 'retry-after': '0' }, json: { detail: 'bad gateway' } };
      fake.next({ polls: 1, output: [fake.putFile('poll.png', image)] });
      fake.answer('get', busy, busy);
      const ok = await runToEnd(ctx, t, 'image.generate', { prompt: 'x', count: 1 });
      assert.equal(ok.status, 'completed', JSON.stringify(ok));
      const cancelsBefore = fake.calls('cancel').length;
      fake.next({ polls: 5, output: [fake.putFile('poll2.png', image)] });
      fake.answer('get', busy, busy, busy);
      const failed = await runToEnd(ctx, t, 'image.generate', { prompt: 'y', count: 1 });
      assert.equal(failed.status, 'failed');
      assert.equal(failed.errorCode, 'PROVIDER_ERROR');
      assert.equal(fake.calls('cancel').length, cancelsBefore + 1, 'the prediction nobody follows any more is cancelled');
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('a failed prediction fails the job PROVIDER_ERROR and charges its consumed predict time', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      fake.defaultScript = { status: 'failed', error: 'CUDA out of memory', predictTime: 2.2 };
      const job = await runToEnd(ctx, t, 'image.generate', { prompt: 'x', count: 2 });
      assert.equal(job.status, 'failed');
      assert.equal(job.errorCode, 'PROVIDER_ERROR');
      assert.equal(job.costMillicents, 10 * 3, 'ceil(2.2) predict seconds, no images');
      assert.deepEqual(await usageOf(ctx.deps, job.id), [['usage', -30]]);
      assert.equal((await balance(ctx, t)).reservedMillicents, 0);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('a retry of a failed job creates a new prediction instead of attaching to the failed one', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      fake.next({ status: 'failed', predictTime: 1 });
      const failed = await runToEnd(ctx, t, 'image.generate', { prompt: 'again', count: 1 });
      assert.equal(failed.status, 'failed');
      const first = fake.last!.id;
      fake.next({ output: [fake.putFile('again.png', image)], predictTime: 1 });
      const retry = await call(ctx, 'POST', `/v1/jobs/${failed.id}/retry`, { secret: t.secret, workspaceId: t.workspace.id, headers: { 'idempotency-key': randomUUID() } });
      assert.equal(retry.statusCode, 202, retry.body);
      await drain(ctx);
      const job = await getJob(ctx, t, failed.id);
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.equal(fake.creations, 2);
      assert.notEqual(job.output.predictionId, first);
      assert.equal(job.costMillicents, 10 + 4000 + 10, 'the failed attempt\'s predict time, then the image');
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('a prediction past the route deadline is cancelled at the provider and the job fails PROVIDER_TIMEOUT, charged what it reports', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      fake.defaultScript = { hold: true, predictTime: 0.6 };
      const started = Date.now();
      const job = await runToEnd(ctx, t, 'music.generate', { prompt: 'endless', durationSeconds: 5 });
      assert.equal(job.status, 'failed');
      assert.equal(job.errorCode, 'PROVIDER_TIMEOUT');
      assert.ok(Date.now() - started >= 1000, 'ran until the 1 s deadline');
      assert.deepEqual(fake.cancels, [fake.last!.id], 'the prediction was cancelled once');
      assert.equal(fake.last!.status, 'canceled');
      assert.equal(job.costMillicents, 100, 'ceil(0.6) reported predict seconds');
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('cancelling the job during a running prediction cancels the prediction at the provider and charges the prediction time it reports', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      fake.defaultScript = { hold: true, predictTime: 3.2 };
      const worker = new JobWorker(ctx.deps, { pollMs: 20 });
      worker.start();
      let jobId = '';
      try {
        jobId = await admitted(ctx, t, 'image.generate', { prompt: 'to be cancelled', count: 1 });
        await fake.waitFor(() => fake.calls('get').length >= 2, 'the prediction to be polled');
        const res = await call(ctx, 'POST', `/v1/jobs/${jobId}/cancel`, { secret: t.secret, workspaceId: t.workspace.id });
        assert.equal(res.statusCode, 200, res.body);
        // The cancel answers after the provider was asked: the prediction is cancelled by then.
        assert.ok(fake.cancels.length >= 1, 'the cancel call reached the provider');
        assert.ok(fake.cancels.every((id) => id === fake.last!.id));
        assert.equal(fake.last!.status, 'canceled');
        assert.equal(fake.calls('cancel')[0]!.headers.authorization, `Bearer ${OPERATOR_TOKEN}`);
        const cancelled = res.json().data;
        assert.equal(cancelled.status, 'cancelled');
        assert.equal(cancelled.costMillicents, 10 * 4, 'ceil(3.2) predict seconds at 10 millicents, reported by the provider');
        assert.equal(fake.creations, 1);
      } finally {
        await worker.stop(2000);
      }
      const job = await getJob(ctx, t, jobId);
      assert.equal(job.status, 'cancelled');
      assert.equal(job.costMillicents, 40, 'the fenced-out attempt changed nothing afterwards');
      assert.deepEqual(await usageOf(ctx.deps, jobId), [['usage', -40]]);
      assert.equal((await balance(ctx, t)).reservedMillicents, 0);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('a file of the wrong kind fails the job PROVIDER_ERROR, charges the consumed work and stores nothing', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      fake.defaultScript = { output: [fake.putFile('not-an-image.png', wav())], predictTime: 1.5 };
      const job = await runToEnd(ctx, t, 'image.generate', { prompt: 'x', count: 1 });
      assert.equal(job.status, 'failed');
      assert.equal(job.errorCode, 'PROVIDER_ERROR');
      assert.equal(job.costMillicents, 20, 'ceil(1.5) predict seconds');
      const rows = await ctx.deps.db.selectFrom('media').select('id').where('job_id', '=', job.id).execute();
      assert.equal(rows.length, 0);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('a file on another origin at a private address is refused under the public-address rule', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      fake.defaultScript = { output: ['http://127.0.0.3:9/files/secret.png'], predictTime: 1 };
      const job = await runToEnd(ctx, t, 'image.generate', { prompt: 'x', count: 1 });
      assert.equal(job.status, 'failed');
      assert.equal(job.errorCode, 'PROVIDER_ERROR');
      assert.equal(job.costMillicents, 10);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// kill -9 of a worker process mid-prediction

const LEASE_MS = 2_000;
const RAISED_LIMITS = { pointsPerMinute: 1_000_000, waitingJobs: 1_000 };

for (const name of testDatabaseNames().filter((n) => n !== 'pglite')) {
  describe(`replicate provider: worker crash mid-prediction [${name}]`, { skip: needsDist() }, () => {
    let database: TestDatabase;
    let dataDir: string;
    let fake: FakeReplicate;
    let file: string;
    const processes: ServerProcess[] = [];

    before(async () => {
      database = await createTestDatabase(name);
      dataDir = mkdtempSync(join(tmpdir(), 'was-replicate-crash-'));
      fake = await FakeReplicate.start();
      file = join(dataDir, 'providers.json');
      writeFileSync(file, JSON.stringify({ providers: { rep: providersFile(fake).providers.rep }, operations: { 'image.generate': providersFile(fake).operations['image.generate'] } }));
    });

    after(async () => {
      for (const p of processes) await p.crash();
      await fake?.close();
      await database.handle.close();
      await database.dispose();
      rmSync(dataDir, { recursive: true, force: true });
    });

    async function start(role: 'all' | 'api' | 'worker'): Promise<ServerProcess> {
      const p = await startServer({
        ROLE: role,
        DATABASE_URL: database.url!,
        DATA_DIR: dataDir,
        SECRET_KEY: PROCESS_SECRET_KEY,
        JOB_LEASE_MS: String(LEASE_MS),
        PROVIDERS_FILE: file,
        FAKE_REPLICATE_TOKEN: OPERATOR_TOKEN,
      });
      processes.push(p);
      return p;
    }

    test('no double spend: a worker killed mid-prediction is recovered onto the same prediction, created exactly once and charged once', async () => {
      const split = name !== 'sqlite';
      const api = await start(split ? 'api' : 'all');
      const worker = split ? await start('worker') : api;
      const t = await seedTenantOverHttp(api.base, 100_000, RAISED_LIMITS);
      const out = await png(30, 30);
      fake.defaultScript = { hold: true, output: [fake.putFile('crash.png', out)], predictTime: 2.4 };

      const res = await httpJson(api.base, 'POST', '/v1/runs', {
        headers: { ...t.headers, 'idempotency-key': 'replicate-crash' },
        body: { operationId: 'image.generate', input: { prompt: 'survive a crash', count: 1 } },
      });
      assert.equal(res.status, 202, JSON.stringify(res.body));
      const jobId: string = res.body.data.jobId;

      const readRow = () => database.handle.db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
      const checkpointed = await waitUntil(readRow, (r) => Boolean(r.checkpoint_json?.includes('predictionId')), 'the prediction id checkpoint', 30_000, 50);
      const state = (JSON.parse(checkpointed.checkpoint_json!) as { state: { predictionId: string; attempt: number } }).state;
      assert.equal(state.predictionId, fake.last!.id);
      assert.equal(state.attempt, 1);
      await fake.waitFor(() => fake.calls('get').length >= 1, 'the first poll');
      await worker.crash();
      assert.equal((await readRow()).status, 'processing', 'the killed worker could not finish the job');
      assert.equal(fake.creations, 1);
      const pollsAtCrash = fake.calls('get').length;

      const base = split ? api.base : (await start('all')).base;
      if (split) await start('worker');
      // The recovered attempt attaches: it polls the same prediction (after the lease expired).
      await fake.waitFor(() => fake.calls('get').length > pollsAtCrash, 'the recovered attempt to poll the prediction', 30_000);
      fake.release();
      const done = await waitUntil(() => readJob(base, t, jobId), (j) => ['completed', 'failed', 'cancelled'].includes(j.status), 'the recovered job to finish', 60_000, 100);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.equal(fake.creations, 1, 'exactly one prediction was created');
      assert.equal(fake.calls('create').length, 1);
      assert.equal(fake.cancels.length, 0);
      assert.ok(fake.calls('get').slice(pollsAtCrash).every((g) => g.path === `/v1/predictions/${state.predictionId}`));
      assert.equal(done.output.predictionId, state.predictionId);
      assert.equal(done.output.images[0].sha256, sha256(out));
      assert.equal(done.costMillicents, 4000 + 10 * 3);
      const row = await readRow();
      assert.equal(Number(row.recoveries), 1);
      assert.deepEqual(await usageOf(database.handle, jobId), [['usage', -(4000 + 30)]], 'one usage transaction for the whole job');

      for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) assert.equal(await p.stop(), 0, 'graceful exit');
      assert.equal(await sumOpenHolds(database.handle.db, t.workspaceId), 0, 'no hold left open');
      await assertLedgerInvariants({ db: database.handle.db, clock: systemClock } as unknown as Deps, t.workspaceId);
    });
  });
}
