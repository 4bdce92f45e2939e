/**
 * (v) Local video editing: one `video.edit` of a 10 s 1280×720 clip (trim to 8 s, resize to
 * 640×360) through the service, against the same ffmpeg command run directly on the same file.
 * Goal: service / direct <= 1.3, i.e. what the service adds to an edit (admission, the job queue,
 * copying the input out of the media store, probing it and the result, checking and storing the
 * result, settling the job, the client's polling) stays small next to the edit itself.
 *
 * The clip is made once per bench run with ffmpeg (testsrc2 picture and a sine tone, H.264/AAC,
 * veryfast) and uploaded once. The service runs exactly as `npm start` runs it (`node dist/main.js
 * serve`, API and worker in one process, built by `npm run bench`) on embedded SQLite in a temp
 * directory with a providers file mapping video.edit to the ffmpeg engine.
 *
 *   direct:  the argument list the engine builds for this input (src/providers/local/video-plan.ts,
 *            from an ffprobe of the clip), run with runProgram in a fresh directory holding a copy
 *            of the clip: wall time of ffmpeg alone;
 *   service: POST /v1/runs, then GET /v1/jobs/{id} every POLL_MS until it is completed: wall time
 *            from the request to the client seeing the result. A run counts when the job completed
 *            with an 8 s video (±0.2 s) charged at 8 s; anything else is an error (exit 1).
 *
 * After one warm-up of each, rounds alternate direct and service (BENCH_VIDEO_ROUNDS, 5); the
 * ratio is the median of the per-round ratios.
 *
 * Run alone: `npm run build && node --import tsx bench/local-video.ts`. Needs ffmpeg and ffprobe.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { copyFile, readFile } from 'node:fs/promises';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { probeEngines } from '../src/providers/local/engines.js';
import { runProgram, withWorkDir } from '../src/providers/local/process.js';
import { planVideoEdit } from '../src/providers/local/video-plan.js';
import { probeVideo } from '../src/providers/local/video-probe.js';
import type { VideoEdit } from '../src/operations/video-edit.js';
import { freePort, spawnChild, waitReady, type Child } from './processes.js';
import { median, seedRunTenant } from './jobs-support.js';

const ROOT = resolve(import.meta.dirname, '..');
const DIST_MAIN = join(ROOT, 'dist/main.js');
const ROUNDS = Number(process.env.BENCH_VIDEO_ROUNDS ?? 5);
const POLL_MS = 20;
const GOAL = 1.3;
const PRICE = { perSecondMillicents: 100 };
const MAX_OUTPUT_SECONDS = 600;
const EDITS: VideoEdit[] = [
  { type: 'trim', startSeconds: 1, endSeconds: 9 },
  { type: 'resize', width: 640, height: 360, fit: 'contain' },
];
const EXPECTED_SECONDS = 8;

export interface LocalVideoRound {
  directMs: number;
  serviceMs: number;
  ratio: number;
}

export interface LocalVideoBenchResult {
  name: 'v';
  label: string;
  value: number;
  goal: number;
  verdict: 'PASS' | 'MISS';
  ok: boolean;
  errors: string[];
  detail: { clipBytes: number; ffmpeg: string; rounds: LocalVideoRound[]; directMedianMs: number; serviceMedianMs: number };
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** The 10 s 1280×720 clip (H.264 and AAC in MP4, faststart), written to `path`. */
async function makeClip(ffmpeg: string, path: string): Promise<void> {
  await withWorkDir(async (dir) => {
    await runProgram(
      {
        path: ffmpeg,
        args: [
          '-hide_banner', '-v', 'error', '-nostdin',
          '-f', 'lavfi', '-i', 'testsrc2=size=1280x720:rate=30:duration=10',
          '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=10',
          '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-movflags', '+faststart',
          '-t', '10', '-f', 'mp4', 'clip.mp4',
        ],
        timeoutMs: 120_000,
      },
      dir,
    );
    await copyFile(join(dir, 'clip.mp4'), path);
  });
}

export async function runLocalVideoBench(): Promise<LocalVideoBenchResult> {
  if (!existsSync(DIST_MAIN)) throw new Error(`${DIST_MAIN} is missing: run \`npm run build\` (npm run bench does)`);
  const engines = await probeEngines({ ffmpegPath: process.env.FFMPEG_PATH, ffprobePath: process.env.FFPROBE_PATH });
  const { ffmpeg, ffprobe } = engines;
  if (!ffmpeg || !ffprobe) throw new Error('the local video bench needs ffmpeg and ffprobe (Debian package ffmpeg)');
  const dir = mkdtempSync(join(tmpdir(), 'was-bench-video-'));
  const adminToken = `bench-admin-${randomBytes(8).toString('hex')}`;
  let service: Child | undefined;
  const errors: string[] = [];
  try {
    const clipPath = join(dir, 'clip.mp4');
    await makeClip(ffmpeg.path, clipPath);
    const clip = await readFile(clipPath);

    // The direct command: the engine's own plan for this input.
    const args = await withWorkDir(async (work) => {
      await copyFile(clipPath, join(work, 'clip-0.mp4'));
      const probe = await probeVideo(ffprobe, work, 'clip-0.mp4', 'video/mp4', new AbortController().signal);
      if ('unreadable' in probe) throw new Error(`ffprobe cannot read the clip: ${probe.unreadable}`);
      return planVideoEdit(EDITS, { file: 'clip-0.mp4', mimeType: 'video/mp4', probe }, [], MAX_OUTPUT_SECONDS).args;
    });
    const direct = async (): Promise<number> =>
      withWorkDir(async (work) => {
        await copyFile(clipPath, join(work, 'clip-0.mp4'));
        const started = performance.now();
        await runProgram({ path: ffmpeg.path, args, timeoutMs: 300_000 }, work);
        return performance.now() - started;
      });

    const providersFile = join(dir, 'providers.json');
    writeFileSync(
      providersFile,
      JSON.stringify({
        providers: { local: { type: 'local' } },
        operations: { 'video.edit': { provider: 'local', engine: 'ffmpeg', maxOutputSeconds: MAX_OUTPUT_SECONDS, price: PRICE } },
      }),
    );
    const port = await freePort();
    service = spawnChild(ROOT, [DIST_MAIN, 'serve'], {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: join(dir, 'data'),
      ADMIN_TOKEN: adminToken,
      NODE_ENV: 'production',
      PROVIDERS_FILE: providersFile,
      ...(process.env.FFMPEG_PATH ? { FFMPEG_PATH: process.env.FFMPEG_PATH } : {}),
      ...(process.env.FFPROBE_PATH ? { FFPROBE_PATH: process.env.FFPROBE_PATH } : {}),
    });
    const base = `http://127.0.0.1:${port}`;
    await waitReady(`${base}/readyz`, service);
    log(`(v) local video: ${cpus().length} CPUs, ${ROUNDS} rounds, a ${(clip.length / 1e6).toFixed(1)} MB 10 s 1280×720 clip, ${ffmpeg.version}`);

    const { headers } = await seedRunTenant(base, {
      name: 'bench-video',
      scopes: ['tools:run', 'jobs:read', 'media:write', 'media:read'],
      operations: ['video.edit'],
      credits: 1_000_000_000_000,
      adminToken,
    });

    const form = new FormData();
    form.append('file', new Blob([clip], { type: 'video/mp4' }), 'clip.mp4');
    const uploaded = await fetch(`${base}/v1/media/upload`, { method: 'POST', headers, body: form });
    const mediaId = ((await uploaded.json()) as { data: { id: string } }).data.id;
    if (uploaded.status !== 200) throw new Error(`upload: ${uploaded.status}`);

    const viaService = async (): Promise<number> => {
      const started = performance.now();
      const res = await fetch(`${base}/v1/runs`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: JSON.stringify({ operationId: 'video.edit', input: { mediaId, edits: EDITS } }),
      });
      const admitted = (await res.json()) as { data?: { jobId?: string } };
      if (res.status !== 202 || !admitted.data?.jobId) throw new Error(`run: ${res.status} ${JSON.stringify(admitted)}`);
      for (;;) {
        const poll = await fetch(`${base}/v1/jobs/${admitted.data.jobId}`, { headers });
        const job = ((await poll.json()) as { data: { status: string; costMillicents: number; errorCode: string | null; output?: { durationSeconds?: number } } }).data;
        if (job.status === 'completed' || job.status === 'failed' || job.status === 'cancelled') {
          const ms = performance.now() - started;
          const seconds = job.output?.durationSeconds ?? NaN;
          if (job.status !== 'completed') errors.push(`job ${job.status} (${job.errorCode})`);
          else if (!(Math.abs(seconds - EXPECTED_SECONDS) <= 0.2) || job.costMillicents !== PRICE.perSecondMillicents * EXPECTED_SECONDS) {
            errors.push(`unexpected result: ${seconds} s charged ${job.costMillicents}`);
          }
          return ms;
        }
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    };

    await direct();
    await viaService();
    const rounds: LocalVideoRound[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const d = await direct();
      const s = await viaService();
      rounds.push({ directMs: Math.round(d), serviceMs: Math.round(s), ratio: s / d });
    }
    const value = median(rounds.map((r) => r.ratio));
    return {
      name: 'v',
      label: 'video.edit (10 s 720p: trim + resize) through the service / the same ffmpeg command run directly, wall time',
      value,
      goal: GOAL,
      verdict: value <= GOAL ? 'PASS' : 'MISS',
      ok: errors.length === 0,
      errors: [...new Set(errors)].slice(0, 5),
      detail: {
        clipBytes: clip.length,
        ffmpeg: ffmpeg.version,
        rounds,
        directMedianMs: median(rounds.map((r) => r.directMs)),
        serviceMedianMs: median(rounds.map((r) => r.serviceMs)),
      },
    };
  } finally {
    await service?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function reportLocalVideoBench(r: LocalVideoBenchResult): void {
  const d = r.detail;
  log(`(v) ${r.label}: ${r.value.toFixed(2)} (goal <= ${r.goal}) ${r.verdict}; median direct ${d.directMedianMs} ms, service ${d.serviceMedianMs} ms`);
  for (const [i, x] of d.rounds.entries()) log(`    round ${i + 1}: direct ${x.directMs} ms, service ${x.serviceMs} ms, ratio ${x.ratio.toFixed(2)}`);
  log(`(v) every run a completed ${EXPECTED_SECONDS} s video charged ${PRICE.perSecondMillicents * EXPECTED_SECONDS}: ${r.ok ? 'OK' : `FAILED (${r.errors.join(' | ')})`}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runLocalVideoBench().then(
    (r) => {
      reportLocalVideoBench(r);
      if (!r.ok) process.exitCode = 1;
    },
    (err: unknown) => {
      process.stderr.write(`local video bench failed: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
