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
 * Beside them, in the same rounds, the floor (bench/floor-speech-server.ts): a minimal server that
 * answers the same three requests the same way (key hashed and looked up, 202, espeak-ng spawned
 * with the same arguments, header fixed, SHA-256 taken, the completed snapshot pushed on the
 * stream, the WAV served) with no database, no durable write and no checks. Its ratio to the
 * direct run is the part of (s) the machine sets; the service's ratio to the floor is its own.
 *
 * Each run through a server (the service's and the floor's) is checked: completed, charged ceil(price × 1000 / 1000), and its audio
 * samples identical to the direct run's (espeak-ng is deterministic; only the header differs,
 * the service writes the true sizes into it). Anything else is an error: reported, and the bench
 * fails (exit 1).
 *
 * The service runs as `npm start` runs it (`node dist/main.js serve`, built by `npm run bench`;
 * BENCH_FROM_SOURCE=1 runs the sources instead) with API and worker in one process, on embedded
 * SQLite in a temp directory, with a providers file mapping speech.generate to espeak-ng. Runs
 * are one at a time (a speech job is a single process run, not a throughput case), after a
 * warm-up of each; direct, service and floor take turns (the direct run first, the other two in
 * alternating order), and each ratio is the median of the per-round ratios, so load from other
 * work on the machine hits all three alike. Beside it, the CPU-time ratio
 * (the service process with the espeak-ng it ran, over espeak-ng run directly, and the same for
 * the floor; /proc, summed over every round since it counts 10 ms ticks): the steadier measure on a busy machine.
 *
 * Run alone: `npm run build && node --import tsx bench/local-speech.ts`. Tunables:
 * BENCH_SPEECH_RUNS (21 measured rounds), BENCH_SPEECH_WARMUP (3), BENCH_LOG_LEVEL, ESPEAK_NG_PATH.
 */
import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { probeEngines } from '../src/providers/local/engines.js';
import { espeakArgs, PITCH, RATE } from '../src/providers/local/espeak.js';
import { descendantsOf } from '../src/providers/local/process-tree.js';
import { median, ROOT, seedRunTenant, startBare, startService, type Service } from './jobs-support.js';
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
  /** The floor server's time to audio in hand, and until it said the job was complete. */
  floorMs: number;
  floorCompletedMs: number;
  /** CPU ms of the floor server and its espeak-ng for the run. */
  floorCpuMs: number;
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
    /** Median over rounds of (floor server's time / direct time): what any server would add on this machine. */
    floorRatio: number;
    floorMs: number;
    floorCompletedRatio: number;
    floorCpuMs: number;
    /** The floor's CPU (its process and espeak-ng) over espeak-ng run directly, summed over rounds. */
    floorCpuRatio: number;
    /** Median over rounds of (service time / floor time): the service's own share. */
    serviceShare: number;
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

/**
 * CPU seconds of a process tree: the process, its live descendants, and the children each has
 * reaped. For the service that is its own process, its launcher's helper (a live child) and the
 * espeak-ng runs the helper started and reaped; for the floor, itself and its espeak-ng runs.
 */
function cpuWithChildren(pid: number): number {
  let total = 0;
  for (const p of [pid, ...descendantsOf(pid)]) {
    const t = cpuTimes(p);
    const cpu = t.user + t.system + t.children;
    // A descendant that ended between the listing and the read counts in its parent's reaped time.
    if (Number.isFinite(cpu) || p === pid) total += cpu;
  }
  return total;
}

/** The samples of a WAV (everything after its 44-byte header: espeak-ng writes no other chunk). */
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
  let floor: Awaited<ReturnType<typeof startBare>> | undefined;
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

    // The floor: the same three requests answered by a minimal server (no database, no durable write).
    const floorKey = `wask_${randomUUID().replaceAll('-', '')}`;
    floor = await startBare('bench/floor-speech-server.ts', { FLOOR_OPEN_KEY: floorKey, FLOOR_ESPEAK_PATH: espeakPath, FLOOR_PER_THOUSAND: String(PRICE.perThousandCharactersMillicents) }, '/readyz');
    const floorHeaders = { authorization: `Bearer ${floorKey}` };

    /** One speech job through a server: run, follow its stream, download the audio; checked. */
    const viaServer = async (who: string, serverBase: string, serverHeaders: Record<string, string>): Promise<{ ms: number; completedMs: number; audioSeconds: number; audioBytes: number }> => {
      const t0 = performance.now();
      const res = await fetch(`${serverBase}/v1/runs`, { method: 'POST', headers: { ...serverHeaders, 'content-type': 'application/json', 'idempotency-key': randomUUID() }, body });
      const admitted = (await res.json()) as { data?: { jobId?: string } };
      if (res.status !== 202 || !admitted.data?.jobId) throw new Error(`${who}: POST /v1/runs: ${res.status} ${JSON.stringify(admitted)}`);
      const job = await awaitSettled(serverBase, admitted.data.jobId, serverHeaders);
      const completedMs = performance.now() - t0;
      if (job.status !== 'completed') throw new Error(`${who}: job ${job.status}: ${job.errorCode}`);
      const audio = await fetch(new URL(job.output.audio.url, serverBase));
      const wav = Buffer.from(await audio.arrayBuffer());
      const ms = performance.now() - t0;
      if (audio.status !== 200 || wav.length !== job.output.audio.sizeBytes) errors.add(`${who}: download ${audio.status}, ${wav.length} of ${job.output.audio.sizeBytes} bytes`);
      else if (samplesDigest(wav) !== referenceDigest) errors.add(`${who}: the audio samples differ from espeak-ng run directly`);
      if (job.costMillicents !== EXPECTED_COST) errors.add(`${who}: cost ${job.costMillicents}, expected ${EXPECTED_COST}`);
      return { ms, completedMs, audioSeconds: job.output.durationSeconds, audioBytes: wav.length };
    };

    const servicePid = service.pid;
    const viaService = async () => {
      const cpu0 = cpuWithChildren(servicePid);
      const r = await viaServer('service', base, headers);
      return { ...r, cpuMs: (cpuWithChildren(servicePid) - cpu0) * 1000 };
    };
    const floorBase = floor.base;
    const floorPid = floor.pid;
    const viaFloor = async () => {
      const cpu0 = cpuWithChildren(floorPid);
      const r = await viaServer('floor', floorBase, floorHeaders);
      return { ...r, cpuMs: (cpuWithChildren(floorPid) - cpu0) * 1000 };
    };

    log(`(s) local speech: ${[...TEXT].length} characters, espeak-ng ${engines.espeak.version}, ${WARMUP} warm-up and ${RUNS} measured runs per side, one at a time`);
    for (let i = 0; i < WARMUP; i++) {
      await direct();
      await viaService();
      await viaFloor();
    }
    const pairs: SpeechPair[] = [];
    let audio = { audioSeconds: NaN, audioBytes: NaN };
    for (let i = 0; i < RUNS; i++) {
      try {
        const d = await direct();
        // The service and the floor take turns at going first after the direct run.
        const f0 = i % 2 === 1 ? await viaFloor() : undefined;
        const s = await viaService();
        const f = f0 ?? (await viaFloor());
        audio = s;
        pairs.push({
          directMs: round(d.ms),
          directCpuMs: round(d.cpuMs),
          serviceCpuMs: round(s.cpuMs),
          serviceMs: round(s.ms),
          completedMs: round(s.completedMs),
          ratio: s.ms / d.ms,
          floorMs: round(f.ms),
          floorCompletedMs: round(f.completedMs),
          floorCpuMs: round(f.cpuMs),
        });
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
        floorRatio: median(pairs.map((p) => p.floorMs / p.directMs)),
        floorMs: median(pairs.map((p) => p.floorMs)),
        floorCompletedRatio: median(pairs.map((p) => p.floorCompletedMs / p.directMs)),
        floorCpuMs: median(pairs.map((p) => p.floorCpuMs)),
        floorCpuRatio: sumRatio(pairs.map((p) => p.floorCpuMs), pairs.map((p) => p.directCpuMs)),
        serviceShare: median(pairs.map((p) => p.serviceMs / p.floorMs)),
        pairs,
      },
    };
  } finally {
    await service?.child.stop();
    await floor?.child.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const round = (ms: number) => Math.round(ms * 10) / 10;
/** CPU times are counted in 10 ms ticks: their ratio is taken over the sums of every pair, not per pair. */
const sumRatio = (a: number[], b: number[]) => a.reduce((x, y) => x + y, 0) / b.reduce((x, y) => x + y, 0);
/** CPU seconds of this process's reaped children (the direct espeak-ng runs). */
const children = () => cpuTimes(process.pid).children;

export function reportLocalSpeechBench(r: LocalSpeechBenchResult): void {
  const d = r.detail;
  log(
    `(s) ${r.label}: ${r.value.toFixed(2)} (goal <= ${r.goal}) ${r.verdict}; medians: direct ${d.directMs} ms, service ${d.serviceMs} ms ` +
      `(job known complete after ${d.completedMs} ms, ratio ${d.completedRatio.toFixed(2)}); ` +
      `CPU per run: espeak-ng direct ${d.directCpuMs.toFixed(0)} ms, service with espeak-ng ${d.serviceCpuMs.toFixed(0)} ms, ratio ${d.cpuRatio.toFixed(2)}; ${d.audioSeconds} s of audio, ${d.audioBytes} bytes`,
  );
  log(
    `    floor (bench/floor-speech-server.ts, no database, no durable write): ${d.floorRatio.toFixed(2)} of the direct run (median ${d.floorMs} ms; ` +
      `job known complete at ${d.floorCompletedRatio.toFixed(2)}; CPU per run ${d.floorCpuMs.toFixed(0)} ms, ratio ${d.floorCpuRatio.toFixed(2)}); service / floor ${d.serviceShare.toFixed(2)}`,
  );
  log(`    rounds (direct/service/floor ms): ${d.pairs.map((p) => `${p.directMs}/${p.serviceMs}/${p.floorMs}`).join(' ')}`);
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
