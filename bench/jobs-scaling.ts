/**
 * (jw) Throughput grows with workers (issue 38, item 4), on PostgreSQL: jobs that wait on I/O
 * (image.generate on the simulated provider with `[sim:delay=300]`: 300 ms of waiting, almost no
 * CPU), JOB_CONCURRENCY=8 per worker process, behind one API process (ROLE=api), first with one
 * worker process and then with two, each on a fresh database.
 *
 * Each configuration is measured twice:
 * - **capacity**: the queue is kept full (a top-up loop keeps at least two slots' worth of jobs
 *   pending beside the running ones), and the jobs completed in a window of BENCH_SCALING_S
 *   seconds (8) after a warm-up are counted. Its ceiling is workers × concurrency ÷ job time; the
 *   share of it reached is the configuration's efficiency (goal ≥ 0.8 each) and the two rates'
 *   ratio the scaling (goal ≥ 1.8).
 * - **queue wait**: jobs arrive evenly at 0.7 of the ceiling for 4 s (an open loop, so the queue
 *   is never full by construction) and the wait from admission to claim (`started_at_ms -
 *   created_at_ms` of each job, both written by the service's clock) is reported as p50 / p99.
 *   A full queue's wait would only measure the backlog the bench itself made.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Agent, request } from 'undici';
import { withFreshDatabase } from './jobs-pg.js';
import { freePort, waitReady } from './processes.js';
import { seedJobTenant, sleep, startService, type JobTenant, type Service } from './jobs-support.js';

const JOB_MS = 300;
const CONCURRENCY = 8;
const WINDOW_S = Number(process.env.BENCH_SCALING_S ?? 8);
const BODY = JSON.stringify({ operationId: 'image.generate', input: { prompt: `bench io [sim:delay=${JOB_MS}]`, width: 256, height: 256 } });

interface Admitter {
  admit(): Promise<void>;
  close(): Promise<void>;
}

function admitter(svc: Service, t: JobTenant): Admitter {
  const dispatcher = new Agent({ connections: 8 });
  const headers = { ...t.headers, 'content-type': 'application/json' };
  return {
    async admit() {
      const res = await request(`${svc.base}/v1/runs`, { method: 'POST', dispatcher, headers: { ...headers, 'idempotency-key': randomUUID() }, body: BODY });
      const text = await res.body.text();
      if (res.statusCode !== 202) throw new Error(`POST /v1/runs: ${res.statusCode} ${text}`);
    },
    close: () => dispatcher.close(),
  };
}

async function count(pool: pg.Pool, where: string): Promise<number> {
  const { rows } = await pool.query(`select count(*)::int as n from jobs where ${where}`);
  return rows[0].n as number;
}

async function untilIdle(pool: pg.Pool, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await count(pool, "status in ('pending', 'processing')")) > 0) {
    if (Date.now() > deadline) throw new Error('jobs still open');
    await sleep(20);
  }
}

/** Keeps `slots * 2` jobs pending until stopped; returns the stop function. */
function keepFull(pool: pg.Pool, a: Admitter, slots: number): () => Promise<void> {
  let running = true;
  const loop = (async () => {
    while (running) {
      const pending = await count(pool, "status = 'pending'");
      const missing = slots * 2 - pending;
      if (missing > 0) await Promise.all(Array.from({ length: missing }, () => a.admit()));
      await sleep(20);
    }
  })();
  return async () => {
    running = false;
    await loop;
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function measureConfiguration(serverUrl: string, workers: number) {
  return withFreshDatabase(serverUrl, async (url) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'was-bench-scaling-'));
    const env = { DATABASE_URL: url, DATA_DIR: dataDir };
    const api = await startService('serve', { ...env, ROLE: 'api' });
    const workerProcesses: Service[] = [];
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    const slots = workers * CONCURRENCY;
    const ceilingPerS = (slots * 1000) / JOB_MS;
    let a: Admitter | undefined;
    try {
      const t = await seedJobTenant(api.base, 'bench-scaling', slots * 4);
      // Each worker is up (its metrics listener answers /healthz) before anything is measured.
      for (let i = 0; i < workers; i++) {
        const metricsPort = await freePort();
        const worker = await startService('worker', { ...env, JOB_CONCURRENCY: String(CONCURRENCY), METRICS_PORT: String(metricsPort) });
        workerProcesses.push(worker);
        await waitReady(`http://127.0.0.1:${metricsPort}/healthz`, worker.child, 60_000);
      }
      a = admitter(api, t);

      // Capacity: a full queue, a warm-up of 2 s, then the window.
      const stop = keepFull(pool, a, slots);
      await sleep(2000);
      const before = await count(pool, "status = 'completed'");
      const t0 = performance.now();
      await sleep(WINDOW_S * 1000);
      const after = await count(pool, "status = 'completed'");
      const t1 = performance.now();
      await stop();
      await untilIdle(pool);
      const perS = ((after - before) * 1000) / (t1 - t0);

      // Queue wait at 0.7 of the ceiling, arrivals evenly spaced.
      const { rows: mark } = await pool.query('select coalesce(max(created_at_ms), 0)::bigint as m from jobs');
      const rate = 0.7 * ceilingPerS;
      const arrivals = Math.round(rate * 4);
      const start = performance.now();
      const admissions: Promise<void>[] = [];
      for (let i = 0; i < arrivals; i++) {
        const due = start + (i * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        admissions.push(a.admit());
      }
      await Promise.all(admissions);
      await untilIdle(pool);
      const { rows } = await pool.query('select (started_at_ms - created_at_ms)::int as w from jobs where created_at_ms > $1 and started_at_ms is not null order by w', [mark[0].m]);
      const waits = rows.map((r) => r.w as number);
      if (waits.length !== arrivals) throw new Error(`queue wait: ${waits.length} jobs started of ${arrivals} admitted`);
      return {
        workers,
        perS,
        ceilingPerS,
        efficiency: perS / ceilingPerS,
        completed: after - before,
        queueWaitMs: { p50: percentile(waits, 50), p99: percentile(waits, 99), arrivalsPerS: +rate.toFixed(1) },
      };
    } finally {
      await a?.close();
      await pool.end();
      for (const w of workerProcesses) await w.child.stop();
      await api.child.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}

export async function measureScaling(serverUrl: string) {
  const one = await measureConfiguration(serverUrl, 1);
  const two = await measureConfiguration(serverUrl, 2);
  const shape = (r: typeof one) => ({
    jobsPerS: +r.perS.toFixed(1),
    ceiling: +r.ceilingPerS.toFixed(1),
    efficiency: +r.efficiency.toFixed(2),
    completed: r.completed,
    queueWaitMs: r.queueWaitMs,
  });
  return {
    scaling: two.perS / one.perS,
    efficiencyOne: one.efficiency,
    efficiencyTwo: two.efficiency,
    detail: { oneWorker: shape(one), twoWorkers: shape(two), jobMs: JOB_MS, concurrency: CONCURRENCY, windowS: WINDOW_S },
  };
}
