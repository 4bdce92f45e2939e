/**
 * (i) The idle process and its start-up (issue 38, item 2), the default service as an operator
 * runs it: `node dist/main.js serve` on embedded SQLite, no providers file, LOG_LEVEL=info.
 *
 *   (i1) start-up to ready: from spawning the process until `GET /readyz` answers 200 (polled every
 *        10 ms), median of BENCH_IDLE_RUNS (7) restarts on the same data directory (the first run,
 *        which creates and migrates the database, is a warm-up)                     goal <= 0.6 s
 *   (i2) VmRSS 1 s after ready, median of those runs                                goal <= 90 MB
 *   (i3) VmRSS after 10 s more of idling (the poll loops of an idle service)          (reported)
 *   (i4) VmRSS after the bench's read load: GET /v1/usage with a key, 50 connections, 3 rounds of
 *        3 s (case b's load), then 2 s of rest                                     goal <= 130 MB
 *   (i5) the rise of VmRSS during a 100 MB upload (POST /v1/media/upload, a WAV streamed over a
 *        loopback socket), the peak sampled every 20 ms against the value just before  goal < 10 MB
 *        Its detail has the second upload's rise (memory the first one freed is reused) and the
 *        floor's: bench/floor-upload-server.ts, a bare node:http server streaming the same bytes
 *        through a SHA-256 into a file, first and second upload.
 *
 * Memory goals are read from /proc (Linux). Run alone with `BENCH_ONLY=i npm run bench` or
 * `node --import tsx bench/idle.ts`.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { request } from 'undici';
import { freePort, sleep, spawnChild, waitReady, type Child } from './processes.js';
import { seedRunTenant, load, median } from './jobs-support.js';
import { upload, writeWav } from './media.js';

const ROOT = resolve(import.meta.dirname, '..');
const RUNS = Number(process.env.BENCH_IDLE_RUNS ?? 7);
const ADMIN_TOKEN = `bench-admin-${randomBytes(8).toString('hex')}`;
const UPLOAD_BYTES = 100 * 1000 * 1000;
const MB = 1024 * 1024;

export interface IdleBenchCase {
  name: string;
  label: string;
  value: number;
  unit: 's' | 'MB';
  goal: number | null;
  /** The goal is an upper bound (`<=`), except (i5)'s strict `<`. */
  verdict: 'PASS' | 'MISS' | null;
  detail?: Record<string, unknown>;
}

function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

async function start(dataDir: string): Promise<{ child: Child; base: string; pid: number; readyS: number }> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawnChild(ROOT, [join(ROOT, 'dist/main.js'), 'serve'], {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    LOG_LEVEL: 'info',
    NODE_ENV: 'production',
    // Not the bench's test-rig exception: the default service.
    SIMULATE_LIVE: 'false',
  });
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.process.exitCode !== null) throw new Error(`service exited with ${child.process.exitCode} before it was ready`);
    try {
      if ((await fetch(`${base}/readyz`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (performance.now() - t0 > 60_000) throw new Error('service not ready in 60 s');
    await sleep(10);
  }
  return { child, base, pid: child.process.pid!, readyS: (performance.now() - t0) / 1000 };
}

/** The floor's rise of VmRSS (MB) over two uploads of `file` (bench/floor-upload-server.ts). */
async function floorUploads(dir: string, file: string): Promise<number[]> {
  const port = await freePort();
  const child = spawnChild(ROOT, ['--import', 'tsx', join(ROOT, 'bench/floor-upload-server.ts')], { PORT: String(port), FLOOR_DIR: dir });
  try {
    await waitReady(`http://127.0.0.1:${port}/`, child);
    const rises: number[] = [];
    for (let i = 0; i < 2; i++) {
      await sleep(500);
      const res = await request(`http://127.0.0.1:${port}/`, { method: 'POST', body: createReadStream(file) });
      const r = (await res.body.json()) as { before: number; peak: number };
      rises.push(r.peak - r.before);
    }
    return rises;
  } finally {
    await child.stop();
  }
}

function bound(name: string, label: string, value: number, unit: 's' | 'MB', goal: number | null, strict = false, detail?: Record<string, unknown>): IdleBenchCase {
  const verdict = goal === null ? null : (strict ? value < goal : value <= goal) ? 'PASS' : 'MISS';
  return { name, label, value, unit, goal, verdict, ...(detail ? { detail } : {}) };
}

export async function runIdleBench(): Promise<IdleBenchCase[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'was-bench-idle-'));
  const ready: number[] = [];
  const rss1: number[] = [];
  const rss10: number[] = [];
  try {
    for (let run = 0; run <= RUNS; run++) {
      const svc = await start(dataDir);
      try {
        await sleep(1000);
        const a = rssBytes(svc.pid);
        await sleep(10_000);
        const b = rssBytes(svc.pid);
        if (run > 0) {
          ready.push(svc.readyS);
          rss1.push(a / MB);
          rss10.push(b / MB);
        }
      } finally {
        await svc.child.stop();
      }
    }

    // Load, then the upload, on one more start.
    const svc = await start(dataDir);
    let afterLoad: number;
    const file = join(dataDir, 'upload.wav');
    let upload100: { before: number; peak: number; ms: number };
    let second: { before: number; peak: number; ms: number };
    try {
      const t = await seedRunTenant(svc.base, { name: 'bench-idle', scopes: ['usage:read', 'media:read', 'media:write'], operations: [], credits: 1_000_000, adminToken: ADMIN_TOKEN });
      for (let round = 0; round < 3; round++) await load({ name: 'i4', url: `${svc.base}/v1/usage`, headers: t.headers, expect: 200, pid: svc.pid }, 3);
      await sleep(2000);
      afterLoad = rssBytes(svc.pid) / MB;

      writeWav(file, UPLOAD_BYTES);
      const once = async () => {
        await sleep(500);
        const before = rssBytes(svc.pid);
        let peak = before;
        const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(svc.pid))), 20);
        try {
          const up = await upload({ base: svc.base, workDir: dataDir, secret: t.secret, workspaceId: t.workspaceId, rounds: 1 }, file, UPLOAD_BYTES);
          peak = Math.max(peak, rssBytes(svc.pid));
          return { before: before / MB, peak: peak / MB, ms: up.ms };
        } finally {
          clearInterval(sampler);
        }
      };
      upload100 = await once();
      second = await once();
    } finally {
      await svc.child.stop();
    }
    const floor = await floorUploads(dataDir, file);
    rmSync(file, { force: true });

    const round1 = (x: number) => +x.toFixed(1);
    return [
      bound('i1', 'start-up to /readyz (median)', median(ready), 's', 0.6, false, { runs: ready.map((x) => +x.toFixed(3)) }),
      bound('i2', 'VmRSS 1 s after ready (median)', median(rss1), 'MB', 90, false, { runs: rss1.map(round1) }),
      bound('i3', 'VmRSS 11 s after ready (median)', median(rss10), 'MB', null, false, { runs: rss10.map(round1) }),
      bound('i4', "VmRSS after the read load (b's GET /v1/usage, 3 x 3 s)", afterLoad, 'MB', 130),
      bound('i5', 'VmRSS rise during a 100 MB upload (peak - before)', upload100.peak - upload100.before, 'MB', 10, true, {
        before: round1(upload100.before),
        peak: round1(upload100.peak),
        uploadMs: Math.round(upload100.ms),
        secondUploadRise: round1(second.peak - second.before),
        floorRise: round1(floor[0]!),
        floorSecondRise: round1(floor[1]!),
      }),
    ];
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export function reportIdleBench(cases: IdleBenchCase[]): void {
  for (const c of cases) {
    const value = c.unit === 's' ? `${c.value.toFixed(3)} s` : `${c.value.toFixed(1)} MB`;
    const goal = c.goal === null ? '' : `  goal ${c.name === 'i5' ? '<' : '<='} ${c.goal} ${c.unit}  ${c.verdict}`;
    process.stdout.write(`  (${c.name}) ${c.label}: ${value}${goal}${c.detail ? `  ${JSON.stringify(c.detail)}` : ''}\n`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runIdleBench()
    .then(reportIdleBench)
    .catch((err: unknown) => {
      process.stderr.write(`idle bench failed: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exit(1);
    });
}
