/**
 * (s) Local speech: speech.generate of 1,000 characters of English on the `espeak-ng` local
 * engine, through the service, against espeak-ng run directly on the same text with the same
 * flags, in the same run. Goal: service time / direct time <= 1.3, i.e. what the service adds to
 * one speech job (HTTP, key, idempotency claim, points, credit hold, job row, the worker's claim,
 * the WAV header fix and the upload checks, storing the file with its sha256, settlement, the
 * client hearing of it) stays small next to the synthesis itself.
 *
 *   direct:  spawn espeak-ng with the engine's own arguments (espeakArgs: voice en-us, rate 175,
 *            pitch 50, UTF-8 text on stdin, WAV on stdout) and read the whole WAV;
 *   service: POST /v1/runs (202 and a job id), follow the job on its event stream (GET
 *            /v1/jobs/{id}/stream, pushed the moment the job settles), then download the audio
 *            from the signed URL: the time until the caller holds the WAV, as it does directly.
 *            The time until the job is known complete (before the download) is reported beside.
 *
 * Each service run is checked: completed, charged ceil(price × 1000 / 1000), and its audio
 * samples identical to the direct run's (espeak-ng is deterministic; only the header differs,
 * the service writes the true sizes into it). Anything else is an error: reported, and the bench
 * fails (exit 1).
 *
 * The service runs as `npm start` runs it (`node dist/main.js serve`, built by `npm run bench`;
 * BENCH_FROM_SOURCE=1 runs the sources instead) with API and worker in one process, on embedded
 * SQLite in a temp directory, with a providers file mapping speech.generate to espeak-ng. Runs
 * are one at a time (a speech job is a single process run, not a throughput case), after a
 * warm-up of both; direct and service alternate, and the ratio is the median of the per-pair
 * ratios, so load from other work on the machine hits both alike. Beside it, the CPU-time ratio
 * (the service process with the espeak-ng it ran, over espeak-ng run directly; /proc, summed over
 * every pair since it counts 10 ms ticks): the steadier measure on a busy machine.
 *
 * Run alone: `npm run build && node --import tsx bench/local-speech.ts`. Tunables:
 * BENCH_SPEECH_RUNS (21 measured pairs), BENCH_SPEECH_WARMUP (3), BENCH_LOG_LEVEL, ESPEAK_NG_PATH.
 */
import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { probeEngines } from '../src/providers/local/engines.js';
import { espeakArgs, PITCH, RATE } from '../src/providers/local/espeak.js';
import { median, ROOT, seedRunTenant, startService, type Service } from './jobs-support.js';
import { cpuTimes } from './processes.js';

const RUNS = Number(process.env.BENCH_SPEECH_RUNS ?? 21);
const WARMUP = Number(process.env.BENCH_SPEECH_WARMUP ?? 3);
const GOAL = 1.3;
const VOICE = 'en-us';
const PRICE = { perThousandCharactersMillicents: 1500 };
const PARAGRAPH =
  'The harbour was quiet before dawn, and the fishing boats rocked gently against the wooden pier. ' +
  'An old man walked along the shore, counting the gulls that circled above the water. ' +
  'He had lived in the village for most of his life, and he knew every path through the dunes. ' +
  'When the sun finally rose, the light spread slowly across the bay, turning the grey sea to silver. ';
/** 1,000 characters of English prose. */
export const TEXT = PARAGRAPH.repeat(Math.ceil(1000 / PARAGRAPH.length)).slice(0, 1000);
const EXPECTED_COST = Math.ceil((PRICE.perThousandCharactersMillicents * [...TEXT].length) / 1000);

export interface SpeechPair {
  directMs: number;
  /** CPU ms of espeak-ng run directly (the bench's reaped children). */
  directCpuMs: number;
  /** CPU ms of the service process and its reaped children (espeak-ng) for the run. */
  serviceCpuMs: number;
  serviceMs: number;
  /** Service time until the job was known complete, before downloading the audio. */
  completedMs: number;
  ratio: number;
}

export interface LocalSpeechBenchResult {
  name: 's';
  label: string;
  value: number;
  goal: number;
  verdict: 'PASS' | 'MISS';
  ok: boolean;
  errors: { count: number; samples: string[] };
  detail: {
    characters: number;
    audioSeconds: number;
    audioBytes: number;
    espeak: string;
    directMs: number;
    serviceMs: number;
    completedMs: number;
    directCpuMs: number;
    serviceCpuMs: number;
    /** Median over pairs of service CPU (its process and espeak-ng) / direct CPU (espeak-ng): steadier than wall time on a busy machine. */
    cpuRatio: number;
    /** Median over pairs of (completed-job time / direct time): the ratio without the download. */
    completedRatio: number;
    pairs: SpeechPair[];
  };
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

class Errors {
  count = 0;
  readonly samples: string[] = [];
  add(what: string): void {
    this.count++;
    if (this.samples.length < 5 && !this.samples.includes(what)) this.samples.push(what.slice(0, 500));
  }
}

/** espeak-ng run directly: the engine's arguments, the text on stdin, the WAV read from stdout. */
function runDirect(path: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(path, espeakArgs(VOICE, RATE.default, PITCH.default), { stdio: ['pipe', 'pipe', 'ignore'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`espeak-ng exited ${code}`))));
    child.stdin.end(TEXT);
  });
}

/** The samples of a WAV (everything after its 44-byte header: espeak-ng writes no other chunk). */
/** CPU seconds (user + system) of the children a process has reaped (Linux /proc; NaN elsewhere). */
function reapedChildrenCpu(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return NaN;
  }
}

/** CPU seconds of a process and of the children it has reaped (the service and its espeak-ng runs). */
function cpuWithChildren(pid: number): number {
  const own = cpuTimes(pid);
  return own.user + own.system + reapedChildrenCpu(pid);
}

const samplesDigest = (wav: Buffer): string => createHash('sha256').update(wav.subarray(44)).digest('hex');

/** Reads the job's event stream until a snapshot with a final status arrives. */
async function awaitSettled(base: string, jobId: string, headers: Record<string, string>): Promise<any> {
  const ac = new AbortController();
  try {
    const res = await fetch(`${base}/v1/jobs/${jobId}/stream`, { headers: { ...headers, accept: 'text/event-stream' }, signal: ac.signal });
    if (res.status !== 200) throw new Error(`stream: ${res.status} ${await res.text()}`);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) throw new Error('the stream ended before the job settled');
      buffer += decoder.decode(chunk.value, { stream: true });
      for (let sep = buffer.indexOf('\n\n'); sep >= 0; sep = buffer.indexOf('\n\n')) {
        const frame = buffer.slice(0, sep);
        buffer = buffer.slice(sep + 2);
        const data = frame.split('\n').find((l) => l.startsWith('data:'));
        if (!/^event: job$/m.test(frame) || !data) continue;
        const job = JSON.parse(data.slice(5));
        if (['completed', 'failed', 'cancelled'].includes(job.status)) return job;
      }
    }
  } finally {
    ac.abort();
  }
}

export async function runLocalSpeechBench(): Promise<LocalSpeechBenchResult> {
  const engines = await probeEngines({ espeakPath: process.env.ESPEAK_NG_PATH });
  if (!engines.espeak) throw new Error('espeak-ng is not installed (Debian package espeak-ng, or set ESPEAK_NG_PATH)');
  const espeakPath = engines.espeak.path;
  if (process.env.BENCH_FROM_SOURCE !== '1' && !existsSync(join(ROOT, 'dist/main.js'))) throw new Error('dist/main.js is missing: run `npm run build` (npm run bench does), or set BENCH_FROM_SOURCE=1');
  const dir = mkdtempSync(join(tmpdir(), 'was-bench-speech-'));
  let service: Service | undefined;
  try {
    const providersFile = join(dir, 'providers.json');
    writeFileSync(providersFile, JSON.stringify({ providers: { local: { type: 'local' } }, operations: { 'speech.generate': { provider: 'local', engine: 'espeak-ng', price: PRICE } } }));
    service = await startService('serve', { DATA_DIR: join(dir, 'data'), PROVIDERS_FILE: providersFile, ...(process.env.ESPEAK_NG_PATH ? { ESPEAK_NG_PATH: process.env.ESPEAK_NG_PATH } : {}) });
    const base = service.base;
    const { headers } = await seedRunTenant(base, { name: 'bench-speech', scopes: ['tools:run', 'jobs:read'], operations: ['speech.generate'], credits: 1_000_000_000 });
    const body = JSON.stringify({ operationId: 'speech.generate', input: { text: TEXT, format: 'wav', voice: VOICE, rate: RATE.default, pitch: PITCH.default } });

    const reference = await runDirect(espeakPath);
    const referenceDigest = samplesDigest(reference);
    const errors = new Errors();

    const direct = async (): Promise<{ ms: number; cpuMs: number }> => {
      const cpu0 = children();
      const t0 = performance.now();
      const wav = await runDirect(espeakPath);
      const ms = performance.now() - t0;
      const cpuMs = (children() - cpu0) * 1000;
      if (samplesDigest(wav) !== referenceDigest) errors.add('direct: espeak-ng produced other samples for the same text');
      return { ms, cpuMs };
    };

    const servicePid = service.pid;
    const viaService = async (): Promise<{ ms: number; completedMs: number; cpuMs: number; audioSeconds: number; audioBytes: number }> => {
      const cpu0 = cpuWithChildren(servicePid);
      const t0 = performance.now();
      const res = await fetch(`${base}/v1/runs`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': randomUUID() }, body });
      const admitted = (await res.json()) as { data?: { jobId?: string } };
      if (res.status !== 202 || !admitted.data?.jobId) throw new Error(`POST /v1/runs: ${res.status} ${JSON.stringify(admitted)}`);
      const job = await awaitSettled(base, admitted.data.jobId, headers);
      const completedMs = performance.now() - t0;
      if (job.status !== 'completed') throw new Error(`job ${job.status}: ${job.errorCode}`);
      const audio = await fetch(new URL(job.output.audio.url, base));
      const wav = Buffer.from(await audio.arrayBuffer());
      const ms = performance.now() - t0;
      const cpuMs = (cpuWithChildren(servicePid) - cpu0) * 1000;
      if (audio.status !== 200 || wav.length !== job.output.audio.sizeBytes) errors.add(`service: download ${audio.status}, ${wav.length} of ${job.output.audio.sizeBytes} bytes`);
      else if (samplesDigest(wav) !== referenceDigest) errors.add('service: the audio samples differ from espeak-ng run directly');
      if (job.costMillicents !== EXPECTED_COST) errors.add(`service: cost ${job.costMillicents}, expected ${EXPECTED_COST}`);
      return { ms, completedMs, cpuMs, audioSeconds: job.output.durationSeconds, audioBytes: wav.length };
    };

    log(`(s) local speech: ${[...TEXT].length} characters, espeak-ng ${engines.espeak.version}, ${WARMUP} warm-up and ${RUNS} measured runs per side, one at a time`);
    for (let i = 0; i < WARMUP; i++) {
      await direct();
      await viaService();
    }
    const pairs: SpeechPair[] = [];
    let audio = { audioSeconds: NaN, audioBytes: NaN };
    for (let i = 0; i < RUNS; i++) {
      try {
        const d = await direct();
        const s = await viaService();
        audio = s;
        pairs.push({ directMs: round(d.ms), directCpuMs: round(d.cpuMs), serviceCpuMs: round(s.cpuMs), serviceMs: round(s.ms), completedMs: round(s.completedMs), ratio: s.ms / d.ms });
      } catch (err) {
        errors.add(String(err));
      }
    }
    const value = median(pairs.map((p) => p.ratio));
    return {
      name: 's',
      label: 'speech.generate of 1,000 characters through the service (to audio in hand) / espeak-ng run directly',
      value,
      goal: GOAL,
      verdict: value <= GOAL ? 'PASS' : 'MISS',
      ok: errors.count === 0 && pairs.length > 0,
      errors: { count: errors.count, samples: errors.samples },
      detail: {
        characters: [...TEXT].length,
        audioSeconds: audio.audioSeconds,
        audioBytes: audio.audioBytes,
        espeak: engines.espeak.version,
        directMs: median(pairs.map((p) => p.directMs)),
        serviceMs: median(pairs.map((p) => p.serviceMs)),
        completedMs: median(pairs.map((p) => p.completedMs)),
        directCpuMs: median(pairs.map((p) => p.directCpuMs)),
        serviceCpuMs: median(pairs.map((p) => p.serviceCpuMs)),
        cpuRatio: sumRatio(pairs.map((p) => p.serviceCpuMs), pairs.map((p) => p.directCpuMs)),
        completedRatio: median(pairs.map((p) => p.completedMs / p.directMs)),
        pairs,
      },
    };
  } finally {
    await service?.child.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const round = (ms: number) => Math.round(ms * 10) / 10;
/** CPU times are counted in 10 ms ticks: their ratio is taken over the sums of every pair, not per pair. */
const sumRatio = (a: number[], b: number[]) => a.reduce((x, y) => x + y, 0) / b.reduce((x, y) => x + y, 0);
/** CPU seconds of this process's reaped children (the direct espeak-ng runs). */
const children = () => reapedChildrenCpu(process.pid);

export function reportLocalSpeechBench(r: LocalSpeechBenchResult): void {
  const d = r.detail;
  log(
    `(s) ${r.label}: ${r.value.toFixed(2)} (goal <= ${r.goal}) ${r.verdict}; medians: direct ${d.directMs} ms, service ${d.serviceMs} ms ` +
      `(job known complete after ${d.completedMs} ms, ratio ${d.completedRatio.toFixed(2)}); ` +
      `CPU per run: espeak-ng direct ${d.directCpuMs.toFixed(0)} ms, service with espeak-ng ${d.serviceCpuMs.toFixed(0)} ms, ratio ${d.cpuRatio.toFixed(2)}; ${d.audioSeconds} s of audio, ${d.audioBytes} bytes`,
  );
  log(`    pairs (direct/service ms): ${d.pairs.map((p) => `${p.directMs}/${p.serviceMs}`).join(' ')}`);
  log(`(s) every run completed, charged ${EXPECTED_COST}, with espeak-ng's own samples: ${r.ok ? 'OK' : `FAILED (${r.errors.count} errors: ${r.errors.samples.join(' | ')})`}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runLocalSpeechBench().then(
    (r) => {
      reportLocalSpeechBench(r);
      if (!r.ok) process.exitCode = 1;
    },
    (err: unknown) => {
      process.stderr.write(`local speech bench failed: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
