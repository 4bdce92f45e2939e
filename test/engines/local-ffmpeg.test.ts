/**
 * video.edit on the `ffmpeg` local engine (issue 15), end to end: a real video is uploaded, run
 * through POST /v1/runs and the job worker, and the stored result is read back with ffprobe, whose
 * duration, frame size and streams must match the edits. Costs are per output second at the
 * file's price, within a maximum from the route's maxOutputSeconds or the edits. Bad inputs end in
 * 400 at admission where they are checkable, else in a failed job with the engine's error code,
 * the hold settled, no ffmpeg left running and no work directory left on disk.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileStrict } from '../../src/http/validation.js';
import { findOperation } from '../../src/operations/registry.js';
import { JobWorker } from '../../src/worker/job-worker.js';
import { storeGeneratedMedia } from '../../src/modules/media/service.js';
import { assertError, assertOk } from '../support/assertions.js';
import { testDatabaseNames } from '../support/databases.js';
import { installedEngines, isRunning, missingPrograms, pidWritten } from '../support/engines.js';
import { runProgram, withWorkDir } from '../../src/providers/local/process.js';
import { INPUT_PROBES_KEPT, probeStoredVideo } from '../../src/providers/local/video-probe.js';
import { WorkerShutdown } from '../../src/providers/types.js';
import { call, createTestContext, disposeTestContext, type TestContext } from '../support/harness.js';
import { balance, drain, getJob, readCompleteOutput, run } from '../support/jobs.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { seedTenant, type Tenant } from '../support/seed.js';
import { png, upload } from '../support/media.js';
import { audioOnlyMp4, cutShort, lyingDuration, makeVideo, probeMedia, rotated90, scrambledMdat, truncatedMdat, zeroSized, type ProbedMedia } from '../support/videos.js';
import { waitFor } from '../support/wait.js';

// Every temporary directory of this file (the engine's work directories included) is made in a
// directory of its own, so "none left behind" counts only this file's runs, not those of other
// test files or of another copy of the suite running at the same time.
const privateTmp = mkdtempSync(join(tmpdir(), 'was-ffmpeg-tmp-'));
process.env.TMPDIR = privateTmp;
after(() => rmSync(privateTmp, { recursive: true, force: true }));

const PRICE = 100;
const MAX_OUTPUT_SECONDS = 20;
const CREDITS = 1_000_000;
/** Frame durations and encoder padding: a result may differ from the exact length by this much. */
const SLACK_SECONDS = 0.15;

const skip = await missingPrograms('ffmpeg', 'ffprobe');

function providersFile(extra: Record<string, unknown> = {}) {
  return {
    providers: { local: { type: 'local' } },
    operations: { 'video.edit': { provider: 'local', engine: 'ffmpeg', maxOutputSeconds: MAX_OUTPUT_SECONDS, price: { perSecondMillicents: PRICE }, ...extra } },
  };
}

async function withProvidersFile(dbName: Parameters<typeof createTestContext>[0], file: unknown): Promise<{ ctx: TestContext; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'was-ffmpeg-test-'));
  const path = join(dir, 'providers.json');
  writeFileSync(path, JSON.stringify(file));
  // A short lease: the worker's heartbeat (a third of it) notices a cancel within a few hundred ms.
  const ctx = await createTestContext(dbName, { env: { PROVIDERS_FILE: path, JOB_LEASE_MS: '1000' } });
  return { ctx, dir };
}

/** Work directories of this engine's runs still on disk (theirs hold clip-N inputs). */
function workDirsLeft(): string[] {
  return readdirSync(tmpdir())
    .filter((n) => n.startsWith('was-engine-'))
    .filter((n) => {
      try {
        return readdirSync(join(tmpdir(), n)).some((f) => f.startsWith('clip-'));
      } catch {
        return false;
      }
    });
}

/**
 * ffmpeg and ffprobe processes working on this engine's inputs (their arguments name clip-N
 * files) in this file's temp directory (their working directory is a work directory there), so
 * another suite's programs running at the same time are not counted.
 */
function enginePrograms(): { pid: number; program: string }[] {
  const found: { pid: number; program: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const program = (argv[0] ?? '').split('/').pop() ?? '';
    if ((program !== 'ffmpeg' && program !== 'ffprobe') || !argv.some((a) => /^clip-\d+\./.test(a))) continue;
    let cwd: string;
    try {
      cwd = readlinkSync(`/proc/${entry}/cwd`);
    } catch {
      continue; // gone meanwhile
    }
    if (cwd.startsWith(`${privateTmp}/`)) found.push({ pid: Number(entry), program });
  }
  return found;
}

function assertNothingLeft(): void {
  assert.deepEqual(workDirsLeft(), [], 'no work directory of the engine is left');
  assert.deepEqual(enginePrograms(), [], 'no ffmpeg or ffprobe of the engine is left running');
}


for (const dbName of testDatabaseNames()) {
  describe(`ffmpeg engine: video.edit [${dbName}]`, { skip }, () => {
    let ctx: TestContext;
    let dir: string;

    before(async () => {
      ({ ctx, dir } = await withProvidersFile(dbName, providersFile()));
    });

    after(async () => {
      if (ctx) await disposeTestContext(ctx);
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    const tenant = () => seedTenant(ctx.deps, { credits: CREDITS });
    /** What the workspace's jobs cost so far (their recorded costs). */
    async function charged(t: Tenant): Promise<number> {
      const row = await ctx.deps.db.selectFrom('jobs').select((eb) => eb.fn.sum<number>('cost_mc').as('total')).where('workspace_id', '=', t.workspace.id).executeTakeFirst();
      return Number(row?.total ?? 0);
    }

    async function uploadVideo(t: Tenant, bytes: Buffer, container: 'mp4' | 'webm' = 'mp4'): Promise<string> {
      return assertOk(await upload(ctx, t, bytes, { type: `video/${container}`, filename: `in.${container}` })).data.id as string;
    }

    /** Runs video.edit to its end; returns the job, its complete result and the admission's maximum. */
    async function edit(t: Tenant, input: Record<string, unknown>) {
      return (await editAll(t, [input]))[0]!;
    }

    /** Admits every input, then lets one drain run them side by side (the worker runs claimed jobs together). */
    async function editAll(t: Tenant, inputs: Record<string, unknown>[]) {
      const admitted = [];
      for (const input of inputs) {
        const res = await run(ctx, t, 'video.edit', input);
        assert.equal(res.statusCode, 202, res.body);
        admitted.push(res.json().data);
      }
      await drain(ctx);
      return Promise.all(
        admitted.map(async (a) => {
          const job = await getJob(ctx, t, a.jobId);
          const result = job.status === 'completed' ? JSON.parse((await readCompleteOutput(ctx, t, a.jobId)).bytes.toString('utf8')) : undefined;
          return { job, result, maximum: a.maximumCostMillicents as number };
        }),
      );
    }

    /** The stored result's bytes (through its signed URL) and what ffprobe reads from them. */
    async function stored(result: { video: { url: string; mimeType: string } }): Promise<{ bytes: Buffer; probe: ProbedMedia }> {
      const u = new URL(result.video.url);
      const res = await ctx.app.inject({ method: 'GET', url: `${u.pathname}${u.search}` });
      assert.equal(res.statusCode, 200, `download ${res.statusCode}`);
      const extension = result.video.mimeType.split('/')[1]!;
      return { bytes: res.rawPayload, probe: await probeMedia(res.rawPayload, extension) };
    }

    const videoStream = (p: ProbedMedia) => p.streams.find((s) => s.type === 'video')!;
    const hasAudio = (p: ProbedMedia) => p.streams.some((s) => s.type === 'audio');
    const near = (actual: number, expected: number, what: string) => assert.ok(Math.abs(actual - expected) <= SLACK_SECONDS, `${what}: ${actual} s, expected ${expected} s`);

    /** The completed job's cost is the price of the result's whole seconds; ledger invariants hold. */
    async function assertCharged(t: Tenant, job: { costMillicents: number }, result: { durationSeconds: number }, maximum: number) {
      assert.equal(job.costMillicents, Math.min(maximum, PRICE * Math.ceil(result.durationSeconds)), 'cost is perSecond × ceil(output seconds)');
      const b = await balance(ctx, t);
      assert.equal(b.reservedMillicents, 0, 'the hold is settled');
      assert.equal(b.totalMillicents, CREDITS - (await charged(t)), 'the credits went down by the costs of the jobs');
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    }

    /** The job failed with `code`, charged nothing, released its hold, and left nothing behind. */
    async function assertFailedClean(t: Tenant, job: { status: string; errorCode: string | null; costMillicents: number }, code: string) {
      assert.equal(job.status, 'failed');
      assert.equal(job.errorCode, code);
      assert.equal(job.costMillicents, 0);
      const b = await balance(ctx, t);
      assert.equal(b.reservedMillicents, 0, 'the hold is settled');
      assert.equal(b.totalMillicents, CREDITS - (await charged(t)), 'the credits went down by the costs of the jobs');
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
      assertNothingLeft();
    }

    test('trim keeps endSeconds − startSeconds, the maximum is the trim’s length, and the cost is perSecond × ceil(output seconds)', async () => {
      const t = await tenant();
      const id = await uploadVideo(t, await makeVideo({ seconds: 3, width: 160, height: 120 }));
      const { job, result, maximum } = await edit(t, { mediaId: id, edits: [{ type: 'trim', startSeconds: 0.5, endSeconds: 2 }] });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.equal(maximum, PRICE * 2, 'maximum: ceil(1.5 s) at the price');
      const valid = compileStrict(findOperation('video.edit')!.resultSchema as object)(result as object);
      assert.ok(valid, JSON.stringify(result));
      assert.equal(result.provider, 'local');
      const { probe } = await stored(result);
      assert.match(probe.formatName, /mp4/);
      near(videoStream(probe).durationSeconds!, 1.5, 'video duration');
      near(result.durationSeconds, 1.5, 'reported duration');
      assert.ok(hasAudio(probe), 'the sound is kept');
      assert.deepEqual([result.width, result.height, result.hasAudio], [160, 120, true]);
      await assertCharged(t, job, result, maximum);
      assertNothingLeft();
    });

    test('the output is cut at the route’s maxOutputSeconds, which bounds the maximum of an untrimmed edit', async () => {
      const t = await tenant();
      const id = await uploadVideo(t, await makeVideo({ seconds: MAX_OUTPUT_SECONDS + 4, width: 32, height: 32, audio: false }));
      const { job, result, maximum } = await edit(t, { mediaId: id, edits: [{ type: 'mute' }] });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.equal(maximum, PRICE * MAX_OUTPUT_SECONDS);
      const { probe } = await stored(result);
      near(videoStream(probe).durationSeconds!, MAX_OUTPUT_SECONDS, 'cut duration');
      await assertCharged(t, job, result, maximum);
    });

    test('resize makes the frame width×height with each fit; contain letterboxes, cover and fill cover the frame', async () => {
      const t = await tenant();
      const id = await uploadVideo(t, await makeVideo({ seconds: 1, width: 160, height: 120 }));
      const fits = ['contain', 'cover', 'fill'] as const;
      const runs = await editAll(t, fits.map((fit) => ({ mediaId: id, edits: [{ type: 'resize', width: 96, height: 40, fit }] })));
      for (const [i, fit] of fits.entries()) {
        const { job, result, maximum } = runs[i]!;
        assert.equal(job.status, 'completed', `${fit}: ${JSON.stringify(job)}`);
        const { bytes, probe } = await stored(result);
        const v = videoStream(probe);
        assert.deepEqual([v.width, v.height], [96, 40], fit);
        assert.deepEqual([result.width, result.height], [96, 40]);
        // 4:3 into 96×40: contain leaves a bar of 22 columns each side (then testsrc's own black
        // border, 11/160 of the picture); cover and fill start the picture at the edge.
        const black = await leadingBlackColumns(bytes);
        if (fit === 'contain') assert.ok(black >= 22, `contain: a black bar on the left (${black} columns)`);
        else assert.ok(black <= 10, `${fit}: the picture reaches the left edge (${black} black columns)`);
        await assertCharged(t, job, result, maximum);
      }
    });

    test('crop keeps the width×height rectangle; a crop outside the frame fails the job with EDIT_OUT_OF_FRAME', async () => {
      const t = await tenant();
      const id = await uploadVideo(t, await makeVideo({ seconds: 1, width: 160, height: 120 }));
      const ok = await edit(t, { mediaId: id, edits: [{ type: 'crop', x: 10, y: 20, width: 64, height: 48 }] });
      assert.equal(ok.job.status, 'completed', JSON.stringify(ok.job));
      const v = videoStream((await stored(ok.result)).probe);
      assert.deepEqual([v.width, v.height], [64, 48]);
      await assertCharged(t, ok.job, ok.result, ok.maximum);
      // The frame at a step is the one the steps before made: 64×64 after the resize.
      const other = await tenant();
      const otherId = await uploadVideo(other, await makeVideo({ seconds: 1, width: 160, height: 120 }));
      const outside = await edit(other, { mediaId: otherId, edits: [{ type: 'resize', width: 64, height: 64 }, { type: 'crop', x: 32, y: 0, width: 64, height: 64 }] });
      await assertFailedClean(other, outside.job, 'EDIT_OUT_OF_FRAME');
    });

    test('mute removes the audio stream', async () => {
      const t = await tenant();
      const id = await uploadVideo(t, await makeVideo({ seconds: 1, width: 160, height: 120 }));
      const { job, result, maximum } = await edit(t, { mediaId: id, edits: [{ type: 'mute' }] });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      const { probe } = await stored(result);
      assert.deepEqual(probe.streams.map((s) => s.type), ['video']);
      assert.equal(result.hasAudio, false);
      await assertCharged(t, job, result, maximum);
    });

    test('speed divides the duration by its factor, picture and sound alike; the maximum follows a trim scaled by a later speed', async () => {
      const t = await tenant();
      const id = await uploadVideo(t, await makeVideo({ seconds: 2, width: 160, height: 120 }));
      const [fast, slow] = await editAll(t, [
        { mediaId: id, edits: [{ type: 'speed', factor: 2 }] },
        { mediaId: id, edits: [{ type: 'trim', startSeconds: 0, endSeconds: 1 }, { type: 'speed', factor: 0.25 }] },
      ]);
      if (!fast || !slow) throw new Error('two runs');
      assert.equal(fast.job.status, 'completed', JSON.stringify(fast.job));
      const fastProbe = (await stored(fast.result)).probe;
      near(videoStream(fastProbe).durationSeconds!, 1, 'twice as fast');
      near(fastProbe.streams.find((s) => s.type === 'audio')!.durationSeconds!, 1, 'the sound too');
      await assertCharged(t, fast.job, fast.result, fast.maximum);

      assert.equal(slow.job.status, 'completed', JSON.stringify(slow.job));
      assert.equal(slow.maximum, PRICE * 4, 'maximum: 1 s trimmed, played at a quarter speed');
      near(videoStream((await stored(slow.result)).probe).durationSeconds!, 4, 'a quarter speed');
      await assertCharged(t, slow.job, slow.result, slow.maximum);
    });

    test('format writes the chosen container: webm (VP9, Opus) and gif (an image file, no sound)', async () => {
      const t = await tenant();
      const id = await uploadVideo(t, await makeVideo({ seconds: 1, width: 160, height: 120 }));
      const [webm, gif] = await editAll(t, [
        { mediaId: id, edits: [{ type: 'format', container: 'webm' }] },
        { mediaId: id, edits: [{ type: 'resize', width: 80, height: 60 }, { type: 'format', container: 'gif' }] },
      ]);
      if (!webm || !gif) throw new Error('two runs');
      assert.equal(webm.job.status, 'completed', JSON.stringify(webm.job));
      assert.equal(webm.result.video.mimeType, 'video/webm');
      const webmProbe = (await stored(webm.result)).probe;
      assert.match(webmProbe.formatName, /webm/);
      assert.deepEqual(webmProbe.streams.map((s) => s.codec).sort(), ['opus', 'vp9']);
      await assertCharged(t, webm.job, webm.result, webm.maximum);

      assert.equal(gif.job.status, 'completed', JSON.stringify(gif.job));
      assert.equal(gif.result.video.mimeType, 'image/gif');
      const media = await ctx.deps.db.selectFrom('media').select('kind').where('id', '=', gif.result.video.mediaId).executeTakeFirstOrThrow();
      assert.equal(media.kind, 'image', 'a gif is stored as image media');
      const gifProbe = (await stored(gif.result)).probe;
      assert.equal(gifProbe.formatName, 'gif');
      assert.deepEqual(gifProbe.streams.map((s) => [s.type, s.width, s.height]), [['video', 80, 60]]);
      assert.equal(gif.result.hasAudio, false);
      await assertCharged(t, gif.job, gif.result, gif.maximum);
    });

    test('concat appends a second video (fitted to the frame, silence where it has no sound): durations add up, and a concat lifts the bound of an earlier trim', async () => {
      const t = await tenant();
      const first = await uploadVideo(t, await makeVideo({ seconds: 2, width: 160, height: 120 }));
      const second = await uploadVideo(t, await makeVideo({ seconds: 1, width: 64, height: 64, fps: 25, audio: false, container: 'webm' }), 'webm');
      // The same video may come back: 2 s + 1 s + the first 0.5 s of 3 s (a trim after a concat cuts the whole).
      const { job, result, maximum } = await edit(t, {
        mediaId: first,
        edits: [{ type: 'concat', mediaId: second }, { type: 'concat', mediaId: first }, { type: 'trim', startSeconds: 0, endSeconds: 3.5 }, { type: 'format', container: 'mp4' }],
      });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.equal(maximum, PRICE * 4, 'the trim after the concats bounds the maximum: ceil(3.5 s)');
      const { probe } = await stored(result);
      near(videoStream(probe).durationSeconds!, 3.5, 'picture');
      near(probe.streams.find((s) => s.type === 'audio')!.durationSeconds!, 3.5, 'sound');
      assert.deepEqual([videoStream(probe).width, videoStream(probe).height], [160, 120]);
      await assertCharged(t, job, result, maximum);
      const estimate = assertOk(
        await call(ctx, 'POST', '/v1/estimates', {
          secret: t.secret,
          workspaceId: t.workspace.id,
          body: { operationId: 'video.edit', input: { mediaId: first, edits: [{ type: 'trim', startSeconds: 0, endSeconds: 1 }, { type: 'concat', mediaId: second }] } },
        }),
      ).data;
      assert.equal(estimate.maximumCostMillicents, PRICE * MAX_OUTPUT_SECONDS, 'a video appended after a trim is of unknown length: the route bound applies');
    });

    test('a rotated video is edited as it is displayed (its width and height swapped)', async () => {
      const t = await tenant();
      const id = await uploadVideo(t, rotated90(await makeVideo({ seconds: 1, width: 160, height: 120 })));
      const { job, result, maximum } = await edit(t, { mediaId: id, edits: [{ type: 'mute' }] });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      const v = videoStream((await stored(result)).probe);
      assert.deepEqual([v.width, v.height], [120, 160]);
      await assertCharged(t, job, result, maximum);
    });

    test('a container that lies about its duration is charged for the real output, within a maximum it cannot raise', async () => {
      const t = await tenant();
      const id = await uploadVideo(t, lyingDuration(await makeVideo({ seconds: 2, width: 160, height: 120 }), 5000));
      const { job, result, maximum } = await edit(t, { mediaId: id, edits: [{ type: 'resize', width: 80, height: 60 }] });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.equal(maximum, PRICE * MAX_OUTPUT_SECONDS);
      near(result.durationSeconds, 2, 'the frames there are');
      await assertCharged(t, job, result, maximum);
    });

    test('without a chat provider the served inputSchema requires edits and has no prompt; a prompt is 400 INVALID_INPUT naming what to configure and reserves nothing', async () => {
      const t = await tenant();
      const tools = assertOk(await call(ctx, 'GET', '/v1/tools', { secret: t.secret, workspaceId: t.workspace.id })).data.items;
      const schema = tools.flatMap((x: { operations: { operationId: string }[] }) => x.operations).find((o: { operationId: string }) => o.operationId === 'video.edit').inputSchema;
      assert.deepEqual([...schema.required].sort(), ['edits', 'mediaId']);
      assert.equal(schema.properties.prompt, undefined);
      assert.equal(schema.anyOf, undefined);
      assert.match(schema.description, /prompt/);
      const id = await uploadVideo(t, await makeVideo({ seconds: 1, width: 160, height: 120 }));
      for (const input of [{ mediaId: id, prompt: 'make it cinematic' }, { mediaId: id, prompt: 'and this', edits: [{ type: 'mute' }] }]) {
        for (const res of [await run(ctx, t, 'video.edit', input), await call(ctx, 'POST', '/v1/estimates', { secret: t.secret, workspaceId: t.workspace.id, body: { operationId: 'video.edit', input } })]) {
          // Without a chat model the refusal says what to configure (prompts: video-edit-prompt.test.ts).
          const [error] = assertError(res, 400, 'INVALID_INPUT').details.errors;
          assert.equal(error.pointer, '/input/prompt');
          assert.match(error.message, /chat\.generate/);
        }
      }
      const b = await balance(ctx, t);
      assert.deepEqual([b.totalMillicents, b.reservedMillicents], [CREDITS, 0]);
      const jobs = assertOk(await call(ctx, 'GET', '/v1/jobs', { secret: t.secret, workspaceId: t.workspace.id })).data.items;
      assert.equal(jobs.length, 0, 'no job was created');
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('edits are checked at admission: a concat of non-video media, a trim that ends before it starts, two format steps, odd sizes are 400 INVALID_INPUT at their pointer', async () => {
      const t = await tenant();
      const id = await uploadVideo(t, await makeVideo({ seconds: 1, width: 160, height: 120 }));
      const image = assertOk(await upload(ctx, t, await png(16, 16))).data.id as string;
      const pointers = async (input: Record<string, unknown>) =>
        (assertError(await run(ctx, t, 'video.edit', input), 400, 'INVALID_INPUT').details.errors as { pointer: string }[]).map((e) => e.pointer);
      assert.deepEqual(await pointers({ mediaId: id, edits: [{ type: 'mute' }, { type: 'concat', mediaId: image }] }), ['/input/edits/1/mediaId']);
      assert.deepEqual(await pointers({ mediaId: id, edits: [{ type: 'concat', mediaId: '0190f000-0000-7000-8000-000000000000' }] }), ['/input/edits/0/mediaId']);
      assert.deepEqual(await pointers({ mediaId: id, edits: [{ type: 'trim', startSeconds: 2, endSeconds: 2 }] }), ['/input/edits/0/endSeconds']);
      assert.deepEqual(await pointers({ mediaId: id, edits: [{ type: 'format', container: 'webm' }, { type: 'format', container: 'gif' }] }), ['/input/edits/1']);
      assertError(await run(ctx, t, 'video.edit', { mediaId: id, edits: [{ type: 'resize', width: 101, height: 100 }] }), 400, 'INVALID_INPUT');
      assertError(await run(ctx, t, 'video.edit', { mediaId: id, edits: [{ type: 'speed', factor: 8 }] }), 400, 'INVALID_INPUT');
      const b = await balance(ctx, t);
      assert.deepEqual([b.totalMillicents, b.reservedMillicents], [CREDITS, 0]);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('a video cut short is refused at upload (400 UNSUPPORTED_MEDIA)', async () => {
      const t = await tenant();
      const res = await upload(ctx, t, cutShort(await makeVideo({ seconds: 1, width: 160, height: 120 })), { type: 'video/mp4', filename: 'cut.mp4' });
      assertError(res, 400, 'UNSUPPORTED_MEDIA');
    });

    test('damaged videos the upload lets through (scrambled or truncated media data, no video stream, a 0×0 frame) fail the job with MEDIA_UNREADABLE', async () => {
      const t = await tenant();
      const good = await makeVideo({ seconds: 1, width: 160, height: 120 });
      const ids = [
        await uploadVideo(t, scrambledMdat(good)),
        await uploadVideo(t, truncatedMdat(good)),
        await uploadVideo(t, await audioOnlyMp4()),
        await uploadVideo(t, zeroSized(good)),
      ];
      for (const { job } of await editAll(t, ids.map((id) => ({ mediaId: id, edits: [{ type: 'mute' }] })))) await assertFailedClean(t, job, 'MEDIA_UNREADABLE');
    });

    test('a stored file that is not a video at all fails the job with MEDIA_UNREADABLE', async () => {
      const t = await tenant();
      // Written to the media store directly: the upload inspection would refuse these bytes.
      const item = await storeGeneratedMedia(ctx.deps, { workspaceId: t.workspace.id, jobId: '0190f000-0000-7000-8000-000000000001', name: 'fake.mp4', mimeType: 'video/mp4', bytes: Buffer.from('not a video, only text') });
      const { job } = await edit(t, { mediaId: item.id, edits: [{ type: 'mute' }] });
      await assertFailedClean(t, job, 'MEDIA_UNREADABLE');
    });

    test('a frame beyond 8192 pixels on a side fails the job with MEDIA_TOO_LARGE', async () => {
      const t = await tenant();
      const id = await uploadVideo(t, await makeVideo({ seconds: 1, width: 8200, height: 16, fps: 1, audio: false }));
      const { job } = await edit(t, { mediaId: id, edits: [{ type: 'mute' }] });
      await assertFailedClean(t, job, 'MEDIA_TOO_LARGE');
    });

    test('edits that leave nothing (a trim after the end) fail the job with EMPTY_OUTPUT', async () => {
      const t = await tenant();
      const id = await uploadVideo(t, await makeVideo({ seconds: 1, width: 160, height: 120 }));
      const { job } = await edit(t, { mediaId: id, edits: [{ type: 'trim', startSeconds: 5, endSeconds: 6 }] });
      await assertFailedClean(t, job, 'EMPTY_OUTPUT');
    });

    test('cancelling a job kills its running ffmpeg, removes its work directory and releases the hold', async () => {
      const t = await tenant();
      const id = await uploadVideo(t, await makeVideo({ seconds: MAX_OUTPUT_SECONDS, width: 32, height: 32, audio: false }));
      // Slow on purpose: every one of 200 output frames is 2048×2048.
      const res = await run(ctx, t, 'video.edit', { mediaId: id, edits: [{ type: 'resize', width: 2048, height: 2048, fit: 'fill' }, { type: 'speed', factor: 0.5 }] });
      assert.equal(res.statusCode, 202, res.body);
      const jobId = res.json().data.jobId as string;
      const worker = new JobWorker(ctx.deps, { pollMs: 20 });
      worker.start();
      try {
        const [running] = await waitFor('ffmpeg to run', () => {
          const list = enginePrograms().filter((p) => p.program === 'ffmpeg');
          return list.length > 0 && list;
        });
        assertOk(await call(ctx, 'POST', `/v1/jobs/${jobId}/cancel`, { secret: t.secret, workspaceId: t.workspace.id }));
        await waitFor('ffmpeg to be killed', () => enginePrograms().length === 0 && workDirsLeft().length === 0);
        assert.throws(() => readFileSync(`/proc/${running!.pid}/cmdline`), 'the process is gone');
      } finally {
        await worker.stop(5000);
      }
      const job = await getJob(ctx, t, jobId);
      assert.equal(job.status, 'cancelled');
      assert.equal(job.costMillicents, 0);
      const b = await balance(ctx, t);
      assert.deepEqual([b.totalMillicents, b.reservedMillicents], [CREDITS, 0]);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
      assertNothingLeft();
    });

    test('a run past the route’s timeoutSeconds is killed and fails with PROVIDER_TIMEOUT', async () => {
      const slow = await withProvidersFile(dbName, providersFile({ timeoutSeconds: 1 }));
      try {
        const t = await seedTenant(slow.ctx.deps, { credits: CREDITS });
        const bytes = await makeVideo({ seconds: MAX_OUTPUT_SECONDS, width: 32, height: 32, audio: false });
        const id = assertOk(await upload(slow.ctx, t, bytes, { type: 'video/mp4', filename: 'in.mp4' })).data.id as string;
        const res = await run(slow.ctx, t, 'video.edit', { mediaId: id, edits: [{ type: 'resize', width: 2048, height: 2048, fit: 'fill' }] });
        assert.equal(res.statusCode, 202, res.body);
        await drain(slow.ctx);
        const job = await getJob(slow.ctx, t, res.json().data.jobId);
        assert.equal(job.status, 'failed');
        assert.equal(job.errorCode, 'PROVIDER_TIMEOUT');
        const b = await balance(slow.ctx, t);
        assert.deepEqual([b.totalMillicents, b.reservedMillicents], [CREDITS, 0]);
        await assertLedgerInvariants(slow.ctx.deps, t.workspace.id);
        assertNothingLeft();
      } finally {
        await disposeTestContext(slow.ctx);
        rmSync(slow.dir, { recursive: true, force: true });
      }
    });
  });
}

/**
 * runProgram keeps a program in the service's session (a new session is a new scheduling
 * autogroup, slow to get CPU under load), so it finds the program's descendants itself when it
 * kills it; a program ended by a signal it did not send (the service's process group signalled)
 * is a shutdown, not the program's failure. /bin/sh stands in for an engine that starts a child.
 */
describe('runProgram: kills and outside signals', { skip: process.platform !== 'linux' ? 'Linux only (/proc)' : false }, () => {
  test('an abort kills the program and the process it started, and nothing outlives the run', async () => {
    await withWorkDir(async (dir) => {
      const ac = new AbortController();
      const running = runProgram({ path: '/bin/sh', args: ['-c', 'sleep 300 & echo $! > child.pid; wait'], timeoutMs: 60_000, signal: ac.signal }, dir);
      const child = await pidWritten(dir, 'child.pid');
      assert.ok(isRunning(child), 'the grandchild runs');
      ac.abort(new Error('cancelled by the test'));
      await assert.rejects(running, /cancelled by the test/);
      await waitFor('the grandchild to be gone', () => !isRunning(child), 5000);
    });
  });

  test('a timeout kills the program and the process it started', async () => {
    await withWorkDir(async (dir) => {
      const running = runProgram({ path: '/bin/sh', args: ['-c', 'sleep 300 & echo $! > child.pid; wait'], timeoutMs: 1500 }, dir);
      const child = await pidWritten(dir, 'child.pid');
      await assert.rejects(running, (err: Error & { kind?: string }) => err.kind === 'timeout');
      await waitFor('the grandchild to be gone', () => !isRunning(child), 5000);
    });
  });

  test('a program ended by a signal from outside (its process group signalled) rejects with WorkerShutdown', async () => {
    await withWorkDir(async (dir) => {
      const running = runProgram({ path: '/bin/sh', args: ['-c', 'echo $$ > self.pid; exec sleep 300'], timeoutMs: 60_000 }, dir);
      const pid = await pidWritten(dir, 'self.pid');
      process.kill(pid, 'SIGTERM');
      await assert.rejects(running, (err: unknown) => err instanceof WorkerShutdown);
    });
  });

  test('a program killed by another signal is still its own failure', async () => {
    await withWorkDir(async (dir) => {
      const running = runProgram({ path: '/bin/sh', args: ['-c', 'echo $$ > self.pid; exec sleep 300'], timeoutMs: 60_000 }, dir);
      const pid = await pidWritten(dir, 'self.pid');
      process.kill(pid, 'SIGKILL');
      await assert.rejects(running, (err: Error & { kind?: string }) => err.kind === 'exit');
    });
  });
});

describe('probeStoredVideo: a stored input is probed once per content', { skip }, () => {
  test('the same content (sha256, type) of a workspace is not probed again, whatever the file; other content, or the same in another workspace, is; an unreadable file is never kept', async () => {
    const real = (await installedEngines()).ffprobe!;
    // An ffprobe that counts its runs: a script that notes each one, then runs the real program.
    const counter = join(privateTmp, `ffprobe-runs-${process.pid}`);
    const wrapper = join(privateTmp, `counting-ffprobe-${process.pid}`);
    writeFileSync(wrapper, `#!/bin/sh\necho run >> '${counter}'\nexec '${real.path}' "$@"\n`, { mode: 0o755 });
    const runs = () => {
      try {
        return readFileSync(counter, 'utf8').split('\n').filter(Boolean).length;
      } catch {
        return 0;
      }
    };
    const ffprobe = { path: wrapper, version: real.version };
    const signal = new AbortController().signal;
    const sha = (n: number) => n.toString(16).padStart(64, '0');
    const WS = 'a-workspace';
    const video = await makeVideo({ seconds: 2, width: 64, height: 48 });
    await withWorkDir(async (dir) => {
      writeFileSync(join(dir, 'clip-0.mp4'), video);
      const first = await probeStoredVideo(ffprobe, dir, 'clip-0.mp4', { workspaceId: WS, mimeType: 'video/mp4', sha256: sha(1) }, signal);
      assert.ok(!('unreadable' in first) && first.width === 64 && first.height === 48, JSON.stringify(first));
      assert.equal(runs(), 1);
      // The same content again: the kept probe, even where no such file is (ffprobe did not run).
      assert.deepEqual(await probeStoredVideo(ffprobe, dir, 'absent.mp4', { workspaceId: WS, mimeType: 'video/mp4', sha256: sha(1) }, signal), first);
      assert.equal(runs(), 1, 'not probed again');
      // The same content in another workspace: probed (no workspace learns what another edited).
      await probeStoredVideo(ffprobe, dir, 'clip-0.mp4', { workspaceId: 'other-workspace', mimeType: 'video/mp4', sha256: sha(1) }, signal);
      assert.equal(runs(), 2, 'probed for the other workspace');
      await probeStoredVideo(ffprobe, dir, 'absent.mp4', { workspaceId: 'other-workspace', mimeType: 'video/mp4', sha256: sha(1) }, signal);
      assert.equal(runs(), 2, 'then kept for it too');
      // Another content, or the same bytes read as another type: probed.
      await probeStoredVideo(ffprobe, dir, 'clip-0.mp4', { workspaceId: WS, mimeType: 'video/mp4', sha256: sha(2) }, signal);
      assert.equal(runs(), 3);
      assert.ok('unreadable' in (await probeStoredVideo(ffprobe, dir, 'clip-0.mp4', { workspaceId: WS, mimeType: 'video/webm', sha256: sha(1) }, signal)));
      assert.equal(runs(), 4);
      // An unreadable file is probed each time (nothing kept).
      writeFileSync(join(dir, 'junk.mp4'), Buffer.from('not a video at all'));
      for (let i = 0; i < 2; i++) assert.ok('unreadable' in (await probeStoredVideo(ffprobe, dir, 'junk.mp4', { workspaceId: WS, mimeType: 'video/mp4', sha256: sha(3) }, signal)));
      assert.equal(runs(), 6);
      // Bounded: once INPUT_PROBES_KEPT other contents were probed, the least recently used is
      // probed again. A stand-in that prints ffprobe's answer keeps the hundreds of runs quick.
      const quick = join(privateTmp, `quick-ffprobe-${process.pid}`);
      writeFileSync(quick, `#!/bin/sh\necho run >> '${counter}'\necho '{"streams":[{"codec_type":"video","width":64,"height":48}]}'\n`, { mode: 0o755 });
      const stand = { path: quick, version: 'stand-in' };
      await probeStoredVideo(stand, dir, 'clip-0.mp4', { workspaceId: WS, mimeType: 'video/mp4', sha256: sha(1) }, signal);
      for (let i = 0; i < INPUT_PROBES_KEPT - 1; i++) await probeStoredVideo(stand, dir, 'clip-0.mp4', { workspaceId: WS, mimeType: 'video/mp4', sha256: sha(1000 + i) }, signal);
      let before = runs();
      await probeStoredVideo(stand, dir, 'clip-0.mp4', { workspaceId: WS, mimeType: 'video/mp4', sha256: sha(1) }, signal);
      assert.equal(runs(), before, 'still kept: the cache holds INPUT_PROBES_KEPT probes');
      await probeStoredVideo(stand, dir, 'clip-0.mp4', { workspaceId: WS, mimeType: 'video/mp4', sha256: sha(999) }, signal);
      before = runs();
      await probeStoredVideo(stand, dir, 'clip-0.mp4', { workspaceId: WS, mimeType: 'video/mp4', sha256: sha(1000) }, signal);
      assert.equal(runs(), before + 1, 'the least recently used probe was let go');
    });
  });
});

/** Black pixels at the left end of the first frame's middle row (ffmpeg decodes it to 8-bit gray). */
async function leadingBlackColumns(bytes: Buffer): Promise<number> {
  const ffmpeg = (await installedEngines()).ffmpeg!.path;
  return withWorkDir(async (dir) => {
    writeFileSync(join(dir, 'frame.mp4'), bytes);
    const { stdout } = await runProgram(
      { path: ffmpeg, args: ['-v', 'error', '-i', 'frame.mp4', '-frames:v', '1', '-vf', 'crop=iw:2:0:ih/2,format=gray', '-f', 'rawvideo', 'pipe:1'], timeoutMs: 30_000 },
      dir,
    );
    const row = stdout.subarray(0, stdout.length / 2);
    const first = row.findIndex((luma) => luma > 20);
    return first === -1 ? row.length : first;
  });
}
