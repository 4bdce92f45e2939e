/**
 * The job-path benches of issue 3, each a ratio to a baseline measured in the same run:
 *
 *   (ja) POST /v1/runs → 202 (queued image.generate, unique Idempotency-Keys) / bare route, SQLite   goal >= 0.2
 *        (each 202 must name a job of its own: distinct ids, each a row of the workspace)
 *   (jaf) (ja) with SQLITE_SYNCHRONOUS=full (a disk sync per commit); its detail gives ofNormal,
 *        its rate as a share of (ja)'s in the same run                                           goal >= 0.2
 *   (jb) GET /v1/jobs/{id} / bare route, SQLite                                                   goal >= 0.5
 *        (its detail also gives the floor: the same answer from bench/floor-server.ts, a key hash,
 *        one SQLite read and the request line with nothing else, in the same rounds)
 *   (jp) GET /v1/jobs/{id} / bare Fastify route doing one pg read, PostgreSQL                     goal >= 0.75
 *   (jc) jobs completed/s end to end (8 HTTP clients admitting one by one, [sim:delay=0], settled,
 *        event written) / graphile-worker (8 producers calling addJob one at a time, one worker,
 *        no-op task) on the same PostgreSQL                                                        goal >= 1.0
 *   (jd) drain of 20,000 admitted jobs on SQLite / a raw better-sqlite3 claim-and-complete loop    goal >= 0.7 (issue 38)
 *   (jw) I/O-bound jobs ([sim:delay=300], 8 at a time per worker) completed/s with two worker
 *        processes / with one, behind one API process (jobs-scaling.ts); (jw1) and (jw2) give
 *        each configuration's share of its ceiling, and the detail the queue wait p50/p99     goal >= 1.8, 0.8
 *   (je) reading and verifying a 16 MiB complete output (all pages, Rule 6) / sha256 of the bytes  goal >= 0.5
 *        (its detail also gives bestRatio: sha256 over the same number of dependent page reads from
 *        the bare route, the ceiling of any server on this machine; see jobs-output.ts)
 *
 * Run alone with `node --import tsx bench/jobs.ts` (BENCH_FROM_SOURCE=1 runs src/ instead of
 * dist/), or as part of `npm run bench`. BENCH_JOBS=ja,jd selects cases; BENCH_PG_URL (default
 * postgres://postgres@127.0.0.1:5432/postgres) is the server on which fresh databases are made;
 * BENCH_DRAIN_JOBS (20000) and BENCH_E2E_S (5) size (jd) and (jc).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { compareRounds, CONNECTIONS, ROUNDS, ROOT, startBare, startService, seedJobTenant, admitOne, runBody, type LoadCase, type Sample } from './jobs-support.js';
import SqliteDatabase from 'better-sqlite3';
import { measureDrain } from './jobs-drain.js';
import { measureOutputRead } from './jobs-output.js';
import { measureEndToEnd, withFreshDatabase } from './jobs-pg.js';
import { measureScaling } from './jobs-scaling.js';

export interface JobBenchRatio {
  name: string;
  label: string;
  value: number;
  goal: number;
  verdict: 'PASS' | 'MISS';
  detail: Record<string, unknown>;
}

const SELECTED = (process.env.BENCH_JOBS ?? 'ja,jaf,jb,jp,jc,jd,je,jw').split(',').map((s) => s.trim());
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

function ratio(name: string, label: string, value: number, goal: number, detail: Record<string, unknown>): JobBenchRatio {
  const r: JobBenchRatio = { name, label, value, goal, verdict: value >= goal ? 'PASS' : 'MISS', detail };
  log(`  (${name}) ${label}: ${value.toFixed(2)} (goal >= ${goal}) ${r.verdict}  ${JSON.stringify(detail)}`);
  return r;
}

async function waitCompleted(base: string, headers: Record<string, string>, jobId: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const res = await fetch(`${base}/v1/jobs/${jobId}`, { headers });
    const body = (await res.json()) as { data: { status: string } };
    if (body.data.status === 'completed') return;
    if (body.data.status === 'failed' || body.data.status === 'cancelled') throw new Error(`job ${jobId} ended ${body.data.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`job ${jobId} did not complete in time`);
}

function summary(samples: Sample[]) {
  return samples.map((s) => ({ name: s.name, round: s.round, rps: Math.round(s.rps), cpuUsPerRequest: Math.round(s.cpuUsPerRequest), p99Ms: s.p99Ms }));
}

/**
 * Every 202 of the admission bench created a job of its own: the job ids answered are distinct,
 * each is a row of the workspace, and the workspace holds no job beyond them and the requests
 * still in flight when a load ended (answered but not counted by autocannon).
 */
function checkNewJobs(dbPath: string, workspaceId: string, jobIds: string[]): { ok: boolean; answered: number; distinct: number; found: number; rows: number } {
  const db = new SqliteDatabase(dbPath, { readonly: true, fileMustExist: true });
  try {
    const distinct = new Set(jobIds);
    const ids = [...distinct].filter((id) => id !== '');
    let found = 0;
    const exists = db.prepare('select count(*) as n from jobs where id = ? and workspace_id = ?');
    for (const id of ids) found += (exists.get(id, workspaceId) as { n: number }).n;
    const rows = (db.prepare('select count(*) as n from jobs where workspace_id = ?').get(workspaceId) as { n: number }).n;
    // Requests in flight when a load ended: at most one per connection per load (warm-up and rounds).
    const unanswered = rows - found;
    const ok = distinct.size === jobIds.length && ids.length === jobIds.length && found === ids.length && unanswered >= 0 && unanswered <= CONNECTIONS * (ROUNDS + 1);
    const result = { ok, answered: jobIds.length, distinct: distinct.size, found, rows };
    log(`  (ja) each admission created a new job: ${ok ? 'OK' : 'FAILED'} ${JSON.stringify(result)}`);
    return result;
  } finally {
    db.close();
  }
}

/** (jb) and (je) on one SQLite service that also runs the jobs; (ja) on an API-only one (no worker competing). */
async function sqliteCases(out: JobBenchRatio[]): Promise<void> {
  const bare = await startBare('bench/bare-server.ts');
  try {
    if (SELECTED.includes('jb') || SELECTED.includes('je')) {
      const dataDir = mkdtempSync(join(tmpdir(), 'was-bench-jobs-'));
      const svc = await startService('serve', { DATA_DIR: dataDir, ROLE: 'all' });
      try {
        const t = await seedJobTenant(svc.base, 'bench-jobs');
        if (SELECTED.includes('jb')) {
          const jobId = await admitOne(svc.base, t);
          await waitCompleted(svc.base, t.headers, jobId);
          const base: LoadCase = { name: 'bare', url: bare.url, expect: 200, pid: bare.pid };
          const subject: LoadCase = { name: 'jb', url: `${svc.base}/v1/jobs/${jobId}`, headers: t.headers, expect: 200, pid: svc.pid };
          // Its floor: the same answer from bench/floor-server.ts (key hash, one SQLite read, the line).
          const answer = await (await fetch(subject.url, { headers: t.headers })).text();
          const floorKey = `wask_${randomBytes(32).toString('base64url').slice(0, 43)}`;
          const floor = await startBare('bench/floor-server.ts', { LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info', FLOOR_OPEN_KEY: floorKey, FLOOR_JOB_BODY: answer }, '/readyz');
          try {
            const floorCase: LoadCase = { name: 'fjb', url: `${floor.base}/v1/jobs/${jobId}`, headers: { authorization: `Bearer ${floorKey}` }, expect: 200, pid: floor.pid };
            const r = await compareRounds(base, subject, floorCase);
            const f = r.others[0]!;
            out.push(
              ratio('jb', 'GET /v1/jobs/{id} / bare route (SQLite)', r.ratio, 0.5, {
                cpuRatio: +r.cpuRatio.toFixed(2),
                floor: { ratio: +f.ratio.toFixed(2), cpuRatio: +f.cpuRatio.toFixed(2), serviceShare: +(r.ratio / f.ratio).toFixed(2) },
                samples: summary(r.samples),
              }),
            );
          } finally {
            await floor.child.stop();
          }
        }
        if (SELECTED.includes('je')) {
          const jobId = await admitOne(svc.base, t, '[sim:outputBytes=16000000]');
          await waitCompleted(svc.base, t.headers, jobId);
          const r = await measureOutputRead(svc.base, t.headers, jobId, bare.url);
          out.push(ratio('je', '16 MiB complete output read+verify / sha256', r.ratio, 0.5, r.detail));
        }
      } finally {
        await svc.child.stop();
        rmSync(dataDir, { recursive: true, force: true });
      }
    }
    // (ja) at the default SQLITE_SYNCHRONOUS=normal; (jaf) the same with `full` (every commit
    // synced to disk: acknowledged runs survive an OS crash or power cut), to show its cost.
    const admissionCases = [
      { name: 'ja', synchronous: 'normal' },
      { name: 'jaf', synchronous: 'full' },
    ].filter((c) => SELECTED.includes(c.name));
    const admissionRatios: Record<string, number> = {};
    for (const c of admissionCases) {
      const dataDir = mkdtempSync(join(tmpdir(), 'was-bench-jobs-'));
      const svc = await startService('serve', { DATA_DIR: dataDir, ROLE: 'api', SQLITE_SYNCHRONOUS: c.synchronous });
      try {
        const t = await seedJobTenant(svc.base, 'bench-admit');
        const base: LoadCase = { name: 'bare', url: bare.url, expect: 200, pid: bare.pid };
        const jobIds: string[] = [];
        const subject: LoadCase = {
          name: c.name,
          url: `${svc.base}/v1/runs`,
          method: 'POST',
          headers: { ...t.headers, 'content-type': 'application/json' },
          body: runBody(),
          uniqueIdempotencyKey: true,
          jobIds,
          expect: 202,
          pid: svc.pid,
        };
        const r = await compareRounds(base, subject);
        admissionRatios[c.name] = r.ratio;
        const admissions = checkNewJobs(join(dataDir, 'service.db'), t.workspaceId, jobIds);
        if (!admissions.ok) process.exitCode = 1;
        const versusNormal = c.name === 'jaf' && admissionRatios.ja ? { ofNormal: +(r.ratio / admissionRatios.ja).toFixed(2) } : {};
        out.push(
          ratio(c.name, `queued-run admissions / bare route (SQLite, synchronous=${c.synchronous})`, r.ratio, 0.2, {
            cpuRatio: +r.cpuRatio.toFixed(2),
            ...versusNormal,
            newJobs: admissions,
            samples: summary(r.samples),
          }),
        );
      } finally {
        await svc.child.stop();
        rmSync(dataDir, { recursive: true, force: true });
      }
    }
  } finally {
    await bare.child.stop();
  }
  if (SELECTED.includes('jd')) {
    const r = await measureDrain(Number(process.env.BENCH_DRAIN_JOBS ?? 20_000));
    out.push(ratio('jd', 'drain of admitted jobs / raw better-sqlite3 loop (SQLite)', r.ratio, 0.7, r.detail));
  }
}

/** (jp), (jc) and (jw) on fresh PostgreSQL databases. */
async function postgresCases(out: JobBenchRatio[]): Promise<void> {
  if (SELECTED.includes('jp')) {
    await withFreshDatabase(PG_URL, async (url) => {
      const bare = await startBare('bench/bare-pg-server.ts', { DATABASE_URL: url });
      const svc = await startService('serve', { DATABASE_URL: url, ROLE: 'all', DATA_DIR: mkdtempSync(join(tmpdir(), 'was-bench-pg-')) });
      try {
        const t = await seedJobTenant(svc.base, 'bench-pg-read');
        const jobId = await admitOne(svc.base, t);
        await waitCompleted(svc.base, t.headers, jobId);
        const base: LoadCase = { name: 'bare-pg', url: bare.url, expect: 200, pid: bare.pid };
        const subject: LoadCase = { name: 'jp', url: `${svc.base}/v1/jobs/${jobId}`, headers: t.headers, expect: 200, pid: svc.pid };
        const r = await compareRounds(base, subject);
        out.push(ratio('jp', 'GET /v1/jobs/{id} / bare route with one pg read (PostgreSQL)', r.ratio, 0.75, { cpuRatio: +r.cpuRatio.toFixed(2), samples: summary(r.samples) }));
      } finally {
        await Promise.all([svc.child.stop(), bare.child.stop()]);
      }
    });
  }
  if (SELECTED.includes('jc')) {
    const r = await measureEndToEnd(PG_URL, Number(process.env.BENCH_E2E_S ?? 5));
    out.push(ratio('jc', 'jobs completed/s end to end / graphile-worker (PostgreSQL)', r.ratio, 1.0, r.detail));
  }
  if (SELECTED.includes('jw')) {
    const r = await measureScaling(PG_URL);
    out.push(ratio('jw', 'I/O-bound jobs/s, two worker processes / one (PostgreSQL)', r.scaling, 1.8, r.detail));
    out.push(ratio('jw1', 'one worker: jobs/s / its ceiling (8 x 300 ms jobs)', r.efficiencyOne, 0.8, { ...r.detail.oneWorker }));
    out.push(ratio('jw2', 'two workers: jobs/s / their ceiling', r.efficiencyTwo, 0.8, { ...r.detail.twoWorkers }));
  }
}

export async function runJobBenches(): Promise<JobBenchRatio[]> {
  log(`\njob benches (${SELECTED.join(',')}), ${cpus().length} CPUs, service from ${process.env.BENCH_FROM_SOURCE === '1' ? 'src (tsx)' : 'dist'}`);
  const out: JobBenchRatio[] = [];
  await sqliteCases(out);
  await postgresCases(out);
  log('');
  log('ratio  value  goal   verdict  what');
  for (const r of out) log(`${r.name.padEnd(6)} ${r.value.toFixed(2).padStart(5)}  >=${r.goal.toFixed(2)} ${r.verdict.padEnd(8)} ${r.label}`);
  return out;
}

/** Stores the job results under `jobs` in .bench/results.json (keeping what else is there). */
export function writeJobResults(ratios: JobBenchRatio[]): void {
  const file = join(ROOT, '.bench/results.json');
  mkdirSync(join(ROOT, '.bench'), { recursive: true });
  let previous: Record<string, unknown> = {};
  if (existsSync(file)) {
    try {
      previous = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    } catch {
      previous = {};
    }
  }
  writeFileSync(file, `${JSON.stringify({ ...previous, jobs: { at: new Date().toISOString(), ratios } }, null, 2)}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runJobBenches()
    .then((ratios) => writeJobResults(ratios))
    .catch((err: unknown) => {
      process.stderr.write(`job bench failed: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exit(1);
    });
}
