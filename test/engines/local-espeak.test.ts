/**
 * speech.generate on the `espeak-ng` local engine: real speech from the installed espeak-ng (wav,
 * or mp3 encoded with ffmpeg), its voices served as the `voice` enum with `rate` and `pitch`,
 * duration that follows the text and the rate, the cost per 1,000 characters at the file's
 * price; and the failures (a program that exits 1, corrupt output, a program that hangs past
 * the route's timeoutSeconds) failing the job with a documented errorCode, charging nothing,
 * settling the hold, and leaving no process and no temporary directory behind.
 *
 * The failures run on stand-in programs (shell scripts that answer the start-up probe with the
 * real programs, then misbehave as the spoken text asks), so every path runs through the service.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { call, createTestContext, disposeTestContext, type TestContext } from '../support/harness.js';
import { testDatabaseNames } from '../support/databases.js';
import { seedTenant, type Tenant } from '../support/seed.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { balance, drain, getJob, run } from '../support/jobs.js';
import { installedEngines, isRunning, missingPrograms } from '../support/engines.js';
import { compileStrict } from '../../src/http/validation.js';
import { findOperation } from '../../src/operations/registry.js';
import { espeakEngine, fixWavHeader, PITCH, RATE } from '../../src/providers/local/espeak.js';
import type { LocalEngines } from '../../src/providers/local/engines.js';
import type { LocalContext, OperationRoute } from '../../src/providers/types.js';
import { ProviderError, type ProviderRun } from '../../src/providers/types.js';
import type { OperationRouteSpec } from '../../src/providers/providers-file.js';
import { waitFor } from '../support/wait.js';

const PRICE = { perThousandCharactersMillicents: 777 };
const CREDITS = 1_000_000;
const speechOp = findOperation('speech.generate')!;

// Every temporary directory of this file (the engine's work directories included) is made in a
// directory of its own, so "none left behind" is checked without counting other files' runs.
const privateTmp = mkdtempSync(join(tmpdir(), 'was-espeak-test-'));
process.env.TMPDIR = privateTmp;
after(() => rmSync(privateTmp, { recursive: true, force: true }));

/** Work directories of the engine (and of the file check) still present. */
function leftoverDirs(): string[] {
  return readdirSync(privateTmp).filter((n) => n.startsWith('was-engine-') || n.startsWith('was-provider-'));
}

function providersFile(timeoutSeconds?: number) {
  return {
    providers: { local: { type: 'local' } },
    operations: { 'speech.generate': { provider: 'local', engine: 'espeak-ng', price: PRICE, ...(timeoutSeconds ? { timeoutSeconds } : {}) } },
  };
}

/** The result has the operation's documented shape. */
function assertResultShape(result: unknown): void {
  const validate = compileStrict(speechOp.resultSchema as object);
  assert.ok(validate(result), `result ${JSON.stringify(result).slice(0, 400)}: ${JSON.stringify(validate.errors)}`);
}

/** Samples, rate and duration of a complete PCM WAV whose header sizes are true. */
function readWav(bytes: Buffer): { sampleRate: number; dataBytes: number; seconds: number } {
  assert.equal(bytes.toString('latin1', 0, 4), 'RIFF');
  assert.equal(bytes.toString('latin1', 8, 12), 'WAVE');
  assert.equal(bytes.readUInt32LE(4), bytes.length - 8, 'RIFF size is the file size');
  assert.equal(bytes.toString('latin1', 12, 16), 'fmt ');
  assert.equal(bytes.readUInt16LE(20), 1, 'PCM');
  const sampleRate = bytes.readUInt32LE(24);
  const byteRate = bytes.readUInt32LE(28);
  assert.equal(bytes.toString('latin1', 36, 40), 'data');
  const dataBytes = bytes.readUInt32LE(40);
  assert.equal(dataBytes, bytes.length - 44, 'data size is what follows the header');
  return { sampleRate, dataBytes, seconds: dataBytes / byteRate };
}


for (const dbName of testDatabaseNames()) {
  describe(`espeak-ng engine [${dbName}]`, async () => {
    const skip = await missingPrograms('espeak');
    const skipMp3 = skip || (await missingPrograms('espeak', 'ffmpeg'));
    let ctx: TestContext;
    let dir: string;

    before(async () => {
      if (skip) return;
      dir = mkdtempSync(join(privateTmp, 'files-'));
      const file = join(dir, 'providers.json');
      writeFileSync(file, JSON.stringify(providersFile()));
      ctx = await createTestContext(dbName, { env: { PROVIDERS_FILE: file } });
    });

    after(async () => {
      if (ctx) await disposeTestContext(ctx);
    });

    const tenant = () => seedTenant(ctx.deps, { credits: CREDITS });

    async function completed(t: Tenant, input: Record<string, unknown>) {
      const res = await run(ctx, t, 'speech.generate', input);
      assert.equal(res.statusCode, 202, res.body);
      await drain(ctx);
      const job = await getJob(ctx, t, res.json().data.jobId);
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assertResultShape(job.output);
      return job;
    }

    async function download(url: string): Promise<Buffer> {
      const u = new URL(url);
      const res = await ctx.app.inject({ method: 'GET', url: `${u.pathname}${u.search}` });
      assert.equal(res.statusCode, 200, `download ${res.statusCode}`);
      return res.rawPayload;
    }

    test('wav speech is a complete WAV whose duration grows with the text', { skip }, async () => {
      const t = await tenant();
      const short = await completed(t, { text: 'Hello.', format: 'wav' });
      const long = await completed(t, { text: 'Hello. This sentence is a good deal longer than the first one, and takes longer to say.', format: 'wav' });
      for (const job of [short, long]) {
        assert.equal(job.output.format, 'wav');
        assert.equal(job.output.provider, 'local');
        assert.equal(job.output.audio.mimeType, 'audio/wav');
        const wav = readWav(await download(job.output.audio.url));
        assert.equal(wav.sampleRate, 22050);
        assert.ok(Math.abs(job.output.durationSeconds - wav.seconds) < 0.002, `durationSeconds ${job.output.durationSeconds} is the WAV's ${wav.seconds}`);
      }
      assert.ok(short.output.durationSeconds > 0.2, `short ${short.output.durationSeconds}`);
      assert.ok(long.output.durationSeconds > short.output.durationSeconds * 4, `long ${long.output.durationSeconds} vs short ${short.output.durationSeconds}`);
      assert.deepEqual(leftoverDirs(), []);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('mp3 (the default format) is encoded with ffmpeg and stored as audio/mpeg', { skip: skipMp3 }, async () => {
      const t = await tenant();
      const text = 'An mp3 of a few words.';
      const mp3 = await completed(t, { text });
      const wav = await completed(t, { text, format: 'wav' });
      assert.equal(mp3.output.format, 'mp3');
      assert.equal(mp3.output.audio.mimeType, 'audio/mpeg');
      const bytes = await download(mp3.output.audio.url);
      // An ID3 tag or an MPEG frame sync at the start.
      assert.ok(bytes.toString('latin1', 0, 3) === 'ID3' || (bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0), bytes.subarray(0, 4).toString('hex'));
      assert.ok(bytes.length < wav.output.audio.sizeBytes, 'mp3 is smaller than the wav');
      // The duration is the speech's, whatever the container.
      assert.equal(mp3.output.durationSeconds, wav.output.durationSeconds);
      assert.deepEqual(leftoverDirs(), []);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('GET /v1/tools serves the installed espeak-ng voices as the voice enum, with rate and pitch', { skip }, async () => {
      const t = await tenant();
      const res = await call(ctx, 'GET', '/v1/tools', { secret: t.secret, workspaceId: t.workspace.id });
      assert.equal(res.statusCode, 200, res.body);
      const ops = res.json().data.items.flatMap((tool: { operations: { operationId: string }[] }) => tool.operations);
      const speech = ops.find((o: { operationId: string }) => o.operationId === 'speech.generate');
      const props = speech.inputSchema.properties;
      const voices = (await installedEngines()).espeak!.voices.map((v) => v.name);
      assert.deepEqual(props.voice.enum, voices);
      assert.ok(voices.includes('en-us') && voices.length > 50, `voices ${voices.length}`);
      assert.equal(props.voice.default, 'en-us');
      assert.match(props.voice.description, /espeak-ng/);
      assert.deepEqual([props.rate.type, props.rate.minimum, props.rate.maximum, props.rate.default], ['integer', RATE.min, RATE.max, RATE.default]);
      assert.deepEqual([props.pitch.type, props.pitch.minimum, props.pitch.maximum, props.pitch.default], ['integer', PITCH.min, PITCH.max, PITCH.default]);
      assert.deepEqual(props.format.enum, (await installedEngines()).ffmpeg ? ['mp3', 'wav'] : ['wav']);
      assert.deepEqual(speech.inputSchema.required, ['text']);
      assert.equal(speech.inputSchema.additionalProperties, false);
    });

    test('an unknown voice or a rate out of range is 400 INVALID_INPUT and reserves nothing', { skip }, async () => {
      const t = await tenant();
      for (const [input, pointer] of [
        [{ text: 'Hi', voice: 'alloy' }, '/input/voice'],
        [{ text: 'Hi', rate: 500 }, '/input/rate'],
        [{ text: 'Hi', pitch: 100 }, '/input/pitch'],
      ] as const) {
        const res = await run(ctx, t, 'speech.generate', input);
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().code, 'INVALID_INPUT');
        assert.ok(JSON.stringify(res.json().details).includes(pointer), res.body);
      }
      const b = await balance(ctx, t);
      assert.deepEqual([b.totalMillicents, b.reservedMillicents], [CREDITS, 0]);
      const jobs = await ctx.deps.db.selectFrom('jobs').select('id').where('workspace_id', '=', t.workspace.id).execute();
      assert.equal(jobs.length, 0);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('a slower rate gives longer speech of the same text', { skip }, async () => {
      const t = await tenant();
      const text = 'The quick brown fox jumps over the lazy dog, twice over.';
      const slow = await completed(t, { text, format: 'wav', rate: 100 });
      const fast = await completed(t, { text, format: 'wav', rate: 350 });
      assert.ok(slow.output.durationSeconds > fast.output.durationSeconds * 2, `slow ${slow.output.durationSeconds} vs fast ${fast.output.durationSeconds}`);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('pitch is honoured: the same text at another pitch is other audio', { skip }, async () => {
      const t = await tenant();
      const text = 'Pitch test.';
      const low = await completed(t, { text, format: 'wav', pitch: 5, voice: 'en-gb' });
      const high = await completed(t, { text, format: 'wav', pitch: 95, voice: 'en-gb' });
      assert.notEqual(low.output.audio.sha256, high.output.audio.sha256);
      const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex');
      assert.notEqual(digest(await download(low.output.audio.url)), digest(await download(high.output.audio.url)));
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('a text starting with "-" or "--help" is spoken, never read as an option', { skip }, async () => {
      const t = await tenant();
      for (const text of ['--help', '-v xx -s 9999 --stdout', '-w /tmp/owned.wav hello']) {
        const job = await completed(t, { text, format: 'wav' });
        assert.ok(job.output.durationSeconds > 0.3, `${text}: ${job.output.durationSeconds}`);
        readWav(await download(job.output.audio.url));
      }
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('the cost is ceil(perThousandCharactersMillicents × characters / 1000), characters counted as code points', { skip }, async () => {
      const t = await tenant();
      // 1,234 code points, some of them outside ASCII (and one outside the BMP).
      const text = [...('Café au lait, s’il vous plaît. ' + '🙂 ').repeat(40)].slice(0, 1200).join('') + 'é'.repeat(34);
      const characters = [...text].length;
      assert.equal(characters, 1234);
      const cost = Math.ceil((PRICE.perThousandCharactersMillicents * characters) / 1000);
      const est = await call(ctx, 'POST', '/v1/estimates', { secret: t.secret, workspaceId: t.workspace.id, body: { operationId: 'speech.generate', input: { text, format: 'wav' } } });
      assert.equal(est.statusCode, 200, est.body);
      assert.equal(est.json().data.maximumCostMillicents, cost);
      const job = await completed(t, { text, format: 'wav', voice: 'fr-fr' });
      assert.equal(job.output.characters, characters);
      assert.equal(job.costMillicents, cost);
      const b = await balance(ctx, t);
      assert.deepEqual([b.totalMillicents, b.reservedMillicents], [CREDITS - cost, 0]);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });
  });

  describe(`espeak-ng engine failures [${dbName}]`, async () => {
    const skip = await missingPrograms('espeak', 'ffmpeg');
    let ctx: TestContext;
    let dir: string;

    before(async () => {
      if (skip) return;
      const engines = await installedEngines();
      dir = mkdtempSync(join(privateTmp, 'fakes-'));
      mkdirSync(join(dir, 'bin'));
      // Stand-ins: the real programs answer the start-up probe; a run misbehaves as the text asks.
      const fakeEspeak = join(dir, 'bin', 'espeak-ng');
      writeFileSync(
        fakeEspeak,
        `#!/bin/sh
case "$1" in --version|--voices) exec ${engines.espeak!.path} "$@";; esac
pwd >> ${dir}/cwds
text=$(cat)
case "$text" in
  exit-1*) echo "espeak-ng: simulated failure" >&2; exit 1;;
  garbage*) echo "this is not a wav file"; exit 0;;
  hang*) sleep 30 & echo $! > ${dir}/child.pid; echo $$ > ${dir}/shell.pid; wait; exit 0;;
esac
printf '%s' "$text" | ${engines.espeak!.path} "$@"
`,
        { mode: 0o755 },
      );
      const fakeFfmpeg = join(dir, 'bin', 'ffmpeg');
      writeFileSync(
        fakeFfmpeg,
        `#!/bin/sh
case "$2" in -version) exec ${engines.ffmpeg!.path} "$@";; esac
pwd >> ${dir}/cwds
cat > /dev/null
echo "corrupt mp3 bytes"
`,
        { mode: 0o755 },
      );
      const file = join(dir, 'providers.json');
      writeFileSync(file, JSON.stringify(providersFile(1)));
      ctx = await createTestContext(dbName, { env: { PROVIDERS_FILE: file, ESPEAK_NG_PATH: fakeEspeak, FFMPEG_PATH: fakeFfmpeg } });
    });

    after(async () => {
      if (ctx) await disposeTestContext(ctx);
    });

    /** Runs a job that must fail with `code`, charging nothing and settling its hold. */
    async function failsWith(input: Record<string, unknown>, code: string) {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const res = await run(ctx, t, 'speech.generate', input);
      assert.equal(res.statusCode, 202, res.body);
      await drain(ctx);
      const job = await getJob(ctx, t, res.json().data.jobId);
      assert.equal(job.status, 'failed', JSON.stringify(job));
      assert.equal(job.errorCode, code);
      assert.equal(job.costMillicents, 0);
      const b = await balance(ctx, t);
      assert.deepEqual([b.totalMillicents, b.reservedMillicents], [CREDITS, 0]);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
      // Every work directory the programs ran in is gone.
      const cwds = readFileSync(join(dir, 'cwds'), 'utf8').trim().split('\n');
      assert.ok(cwds.every((d) => d.startsWith(join(privateTmp, 'was-engine-'))), cwds.join(', '));
      assert.deepEqual(cwds.filter((d) => existsSync(d)), []);
      assert.deepEqual(leftoverDirs(), []);
    }

    test('espeak-ng exiting 1 fails the job PROVIDER_ERROR, charging nothing', { skip }, async () => {
      await failsWith({ text: 'exit-1 please', format: 'wav' }, 'PROVIDER_ERROR');
    });

    test('espeak-ng output that is not a WAV fails the job PROVIDER_ERROR', { skip }, async () => {
      await failsWith({ text: 'garbage please', format: 'wav' }, 'PROVIDER_ERROR');
    });

    test('corrupt mp3 from ffmpeg fails the job PROVIDER_ERROR (the file check refuses it)', { skip }, async () => {
      await failsWith({ text: 'A real wav, then a corrupt encoding.', format: 'mp3' }, 'PROVIDER_ERROR');
    });

    test('a program running past timeoutSeconds is killed with its children and fails the job PROVIDER_TIMEOUT', { skip }, async () => {
      rmSync(join(dir, 'child.pid'), { force: true });
      await failsWith({ text: 'hang forever', format: 'wav' }, 'PROVIDER_TIMEOUT');
      const shell = Number(readFileSync(join(dir, 'shell.pid'), 'utf8'));
      const child = Number(readFileSync(join(dir, 'child.pid'), 'utf8'));
      assert.equal(isRunning(shell), false, 'the program is gone');
      assert.equal(isRunning(child), false, 'the child it started is gone');
    });
  });
}

/** The engine on its own, with a LocalContext of chosen programs. */
describe('espeak-ng engine (unit)', () => {
  const spec: OperationRouteSpec = { operationId: 'speech.generate', provider: 'local', engine: 'espeak-ng', price: PRICE, timeoutSeconds: 30, pollIntervalMs: 1000, maxOutputSeconds: 600 };

  function engineWith(engines: LocalEngines) {
    const ctx = { egress: undefined, log: pino({ level: 'silent' }), engines, spec, adapters: new Map(), providers: new Map() } as unknown as LocalContext;
    return espeakEngine(ctx);
  }

  function job(input: Record<string, unknown>, signal = new AbortController().signal): ProviderRun {
    const route = { providerName: 'local', model: null, spec } as unknown as OperationRoute;
    return {
      jobId: 'j',
      workspaceId: 'w',
      operation: speechOp,
      input,
      attempt: 1,
      stepsTotal: 1,
      stepsDone: 0,
      state: {},
      checkpointedFiles: () => [],
      maximumMillicents: 1_000_000,
      signal,
      route,
      funding: 'credits',
      apiKey: undefined,
      media: { signedUrl: async () => '', read: async () => ({ bytes: Buffer.alloc(0), mimeType: '', sha256: '' }) },
      isVerifiedHost: async () => false,
      charge: () => 0,
      progress: async () => undefined,
      checkpoint: async () => undefined,
    };
  }

  const voices = [{ name: 'en-us', language: 'en-us', description: 'English (America) (gmw/en-US)' }];

  test('a program that fails (/bin/false) or cannot start is a ProviderError PROVIDER_ERROR, with nothing left behind', async () => {
    for (const path of ['/bin/false', join(privateTmp, 'no-such-program')]) {
      const engine = engineWith({ espeak: { path, version: 'x', voices } });
      await assert.rejects(engine.run(job({ text: 'Hello', format: 'wav' })), (err: unknown) => err instanceof ProviderError && err.code === 'PROVIDER_ERROR' && err.consumedMillicents === 0);
    }
    assert.deepEqual(leftoverDirs(), []);
  });

  test('an abort (a cancel or a stopping worker) kills espeak-ng and its children, rejects with the abort reason and leaves no directory', async () => {
    const dir = mkdtempSync(join(privateTmp, 'abort-'));
    const script = join(dir, 'espeak-ng');
    writeFileSync(script, `#!/bin/sh\nsleep 30 & echo $! > ${dir}/child.pid\npwd > ${dir}/cwd\nwait\n`, { mode: 0o755 });
    const ac = new AbortController();
    const attempt = engineWith({ espeak: { path: script, version: 'x', voices } }).run(job({ text: 'Hello', format: 'wav' }, ac.signal));
    // Gate: the program has started its child.
    await waitFor('espeak-ng to be started', () => existsSync(join(dir, 'cwd')), 10_000, 5);
    const reason = new Error('cancelled by the test');
    ac.abort(reason);
    await assert.rejects(attempt, (err: unknown) => err === reason);
    assert.equal(isRunning(Number(readFileSync(join(dir, 'child.pid'), 'utf8'))), false, 'the child espeak-ng started is gone');
    assert.equal(existsSync(readFileSync(join(dir, 'cwd'), 'utf8').trim()), false, 'the work directory is gone');
    assert.deepEqual(leftoverDirs(), []);
  });

  // Here, not in the job-level block: that block's route times out after 1 s (for its hang
  // test), which 96 MiB through a pipe need not beat on a loaded machine; this route allows 30 s.
  test('speech past the engine bound (MAX_WAV_BYTES) stops the program: PROVIDER_REJECTED, nothing charged, nothing left behind', async () => {
    const dir = mkdtempSync(join(privateTmp, 'endless-'));
    const script = join(dir, 'espeak-ng');
    writeFileSync(script, '#!/bin/sh\nexec cat /dev/zero\n', { mode: 0o755 });
    const engine = engineWith({ espeak: { path: script, version: 'x', voices } });
    await assert.rejects(engine.run(job({ text: 'endless output', format: 'wav' })), (err: unknown) => err instanceof ProviderError && err.code === 'PROVIDER_REJECTED' && err.consumedMillicents === 0);
    assert.deepEqual(leftoverDirs(), []);
    rmSync(dir, { recursive: true, force: true });
  });

  test('a voice or mp3 the deployment no longer has (a job admitted before a restart) is PROVIDER_REJECTED before any program runs', async () => {
    const engine = engineWith({ espeak: { path: '/bin/false', version: 'x', voices } });
    for (const input of [{ text: 'Hi', voice: 'xx-gone', format: 'wav' }, { text: 'Hi', format: 'mp3' }]) {
      await assert.rejects(engine.run(job(input)), (err: unknown) => err instanceof ProviderError && err.code === 'PROVIDER_REJECTED');
    }
  });

  test('without ffmpeg the schema offers wav only, and says why', () => {
    const schema = engineWith({ espeak: { path: '/bin/false', version: 'x', voices } }).inputSchema!(speechOp) as unknown as { properties: Record<string, { enum?: string[]; default?: string; description?: string }> };
    assert.deepEqual(schema.properties.format!.enum, ['wav']);
    assert.equal(schema.properties.format!.default, 'wav');
    assert.match(schema.properties.format!.description!, /mp3 needs ffmpeg/);
    assert.deepEqual(schema.properties.voice!.enum, ['en-us']);
  });

  test('a streamed WAV header gets its true sizes; a WAV without samples is refused', () => {
    const header = Buffer.alloc(44);
    header.write('RIFF', 0, 'latin1');
    header.writeUInt32LE(0x7ffff024, 4);
    header.write('WAVEfmt ', 8, 'latin1');
    header.writeUInt32LE(16, 16);
    header.writeUInt16LE(1, 20);
    header.writeUInt16LE(1, 22);
    header.writeUInt32LE(22050, 24);
    header.writeUInt32LE(44100, 28);
    header.writeUInt16LE(2, 32);
    header.writeUInt16LE(16, 34);
    header.write('data', 36, 'latin1');
    header.writeUInt32LE(0x7ffff000, 40);
    // One second of samples and a cut-off last byte.
    const fixed = fixWavHeader(Buffer.concat([header, Buffer.alloc(44101)]));
    assert.equal(fixed.seconds, 1);
    assert.equal(readWav(fixed.bytes).dataBytes, 44100);
    assert.throws(() => fixWavHeader(Buffer.from(header)), (err: unknown) => err instanceof ProviderError && err.code === 'PROVIDER_ERROR');
    assert.throws(() => fixWavHeader(Buffer.from('Usage: espeak-ng [options]')), (err: unknown) => err instanceof ProviderError && err.code === 'PROVIDER_ERROR');
  });
});
