/**
 * `npm run bench`: requests per second of the service's hot paths against a bare Fastify
 * baseline on the same machine, on embedded SQLite, with the same connection count:
 *
 *   (a) bare Fastify route returning a small JSON        (baseline)
 *   (b) GET /v1/usage with a valid key                   goal b/a >= 0.5
 *   (c) GET /v1/usage with an unknown key (401)          goal c/a >= 0.6
 *   (d) GET /v1/usage over the minute limit (429)        goal d/a >= 0.6
 *   (l) the request log line: CPU per request of (b), (c), (d) at LOG_LEVEL=info minus the same
 *       route on a second service at LOG_LEVEL=warn (no request line)          goal <= 10 µs
 *   (fb), (fc), (fd) the floor of (b), (c), (d): bench/floor-server.ts gives the same answers
 *       (bodies, headers, request line at the service's level) with nothing else, so no server on
 *       this stack can reach a higher ratio on this machine. Reported beside each goal: the
 *       floor's ratio, and the service's requests per second as a share of the floor's.
 *
 * The service runs at the default LOG_LEVEL=info, as users run it; the second service at warn
 * runs the same cases in the same rounds (bw, cw, dw: the warn column beside each ratio).
 * Both servers run as child processes on loopback: the baseline from bench/bare-server.ts and
 * the service exactly as `npm start` runs it (`node dist/main.js serve`, built by `npm run
 * bench`). Around (c) and (d) the bench checks that refused requests wrote nothing: every
 * table's row count and a checksum of its rows (updates in place) are unchanged,
 * credit_transactions is unchanged, and usage_counters moved
 * only by the points of requests that were admitted (minute rollovers during (d)).
 *
 * Results go to stdout (a table) and to .bench/results.json. Exit 1 if a write check fails;
 * ratios below their goals are reported as MISS (they depend on the machine).
 * The cases run interleaved in rounds (a b c d, a b c d, …); each ratio is the median of the
 * per-round ratios, so load from other work on the machine hits baseline and case alike. The
 * CPU time the server process spent per request is reported beside (a steadier measure on a
 * busy machine: the goals are met when the service spends at most 2x / 1.67x the baseline's CPU).
 *
 * Then bench/media.ts (issue 4): upload and signed-download throughput (MB/s) of a 50 MB file,
 * each against a plain file copy of the same file on the same disk, in the same run.
 * Then bench/webhooks.ts (w: webhook deliveries) and bench/providers.ts (p: synchronous
 * chat.generate runs through the service against direct `openai` package calls to the same fake
 * OpenAI server, goal p >= 0.5), bench/local-video.ts (v: video.edit with ffmpeg vs ffmpeg run
 * directly, goal <= 1.3x) and bench/local-speech.ts (s: speech.generate with espeak-ng vs espeak-ng
 * run directly, goal <= 1.3x).
 * Then bench/jobs.ts (issue 3): the job-path ratios (admissions, job reads on SQLite and
 * PostgreSQL, end to end against graphile-worker, drain, complete output; see that file).
 * Then bench/sdk-output.ts (k, issue 17): the SDK's jobs.output of a 16 MiB result against a bare
 * fetch loop over the same pages, goal >= 0.8.
 * Then bench/costs.ts (y, issue 36): GET /v1/costs's read of 31 days by day in 3 groups over a
 * month of 1,000,000 ledger rows, on SQLite and PostgreSQL (goal median <= 50 ms).
 * Then bench/cli.ts (q, issue 38): the operator CLI's `--help` (goal <= 0.25 s) and a read
 * (`users list`, goal <= 0.6 s) as fresh processes, median of 10, beside `node -e 0`, and
 * bench/idle.ts (i, issue 38): the default service's start-up to ready (goal <= 0.6 s), its
 * memory idle (goal <= 90 MB), after the read load (<= 130 MB) and during a 100 MB upload (< 10 MB).
 *
 * Tunables: BENCH_CONNECTIONS (default 50), BENCH_ROUNDS (3), BENCH_ROUND_S (3), BENCH_LOG_LEVEL (info),
 * BENCH_COMPARE_LEVEL (warn: the second service's level; none: no second service),
 * BENCH_MEDIA_ROUNDS (3), BENCH_ONLY (e.g. `c`: run only (a) and the named cases; letters of the
 * other benches alone, such as `m` for media or `p` for provider calls, run only those),
 * BENCH_PROFILE=DIR (write a V8 CPU profile of the service process into DIR; open it in Chrome
 * DevTools), BENCH_NODE_ARGS (extra node flags for the service process, for experiments).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import SqliteDatabase from 'better-sqlite3';
import { compareSnapshots, snapshot, type Snapshot, type WriteCheck } from './checks.js';
import { mediaReport, runMediaBench, type MediaBenchResult } from './media.js';
import { reportWebhookBench, runWebhookBench, type WebhookBenchResult } from './webhooks.js';
import { reportProviderBench, runProviderBench, type ProviderBenchResult } from './providers.js';
import { reportLocalVideoBench, runLocalVideoBench, type LocalVideoBenchResult } from './local-video.js';
import { reportLocalSpeechBench, runLocalSpeechBench, type LocalSpeechBenchResult } from './local-speech.js';
import { runJobBenches, type JobBenchRatio } from './jobs.js';
import { reportSdkBench, runSdkBench, type SdkBenchResult } from './sdk-output.js';
import { reportCliBench, runCliBench, type CliBenchCase } from './cli.js';
import { reportIdleBench, runIdleBench, type IdleBenchCase } from './idle.js';
import { reportCostBench, runCostBench, type CostBenchCase } from './costs.js';
import { cpuTimes, freePort, sleep, spawnChild, waitReady, type Child } from './processes.js';

const ROOT = resolve(import.meta.dirname, '..');
const DIST_MAIN = join(ROOT, 'dist/main.js');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ROUND_S = Number(process.env.BENCH_ROUND_S ?? 3);
const WARMUP_S = 1.5;
const ONLY = process.env.BENCH_ONLY;
const MEDIA_ROUNDS = Number(process.env.BENCH_MEDIA_ROUNDS ?? 3);
const RUN_MEDIA = !ONLY || ONLY.includes('m');
/** The request cases run unless BENCH_ONLY names only other benches (m, w, p, v, s, j). */
const RUN_REQUESTS = !ONLY || /[abcd]/.test(ONLY);
/** The measured service runs at the default log level (info: one request line per request). */
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
/** A second service at this level runs the same cases beside it (the warn column; BENCH_COMPARE_LEVEL=none: off). */
const COMPARE_LEVEL = process.env.BENCH_COMPARE_LEVEL ?? 'warn';
const COMPARE = COMPARE_LEVEL !== 'none' && COMPARE_LEVEL !== LOG_LEVEL;
/** (l): a request log line costs at most this much CPU (the same route with and without it). */
const LOG_LINE_GOAL_US = 10;
const ADMIN_TOKEN = `bench-admin-${randomBytes(8).toString('hex')}`;
/** The SQLite usage flush interval (USAGE_FLUSH_MS default) plus a margin. */
const FLUSH_WAIT_MS = 1500;

type Result = Awaited<ReturnType<typeof autocannon>>;

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function admin<T = any>(base: string, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { success: boolean; data: T };
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

async function seedTenant(base: string, name: string, limits: Record<string, number>, scopes: string[] = ['usage:read']) {
  const { user } = await admin(base, '/admin/v1/users', { email: `${name}-${randomBytes(4).toString('hex')}@bench.example`, name });
  const { workspace } = await admin(base, '/admin/v1/workspaces', { name, plan: 'pro', ownerUserId: user.id });
  await admin(base, `/admin/v1/workspaces/${workspace.id}/settings`, { limits });
  await admin(base, `/admin/v1/workspaces/${workspace.id}/credits`, { amountMillicents: 100_000 });
  const { secret } = await admin(base, '/admin/v1/keys', { userId: user.id, workspaceIds: [workspace.id], scopes, operations: [], transports: ['rest'] });
  return { workspaceId: workspace.id as string, secret: secret as string };
}

async function load(url: string, headers: Record<string, string>, durationS: number): Promise<Result> {
  return autocannon({ url, connections: CONNECTIONS, pipelining: 1, duration: durationS, headers });
}

function statusCounts(r: Result): Record<string, number> {
  return Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, s]) => [code, (s as { count: number }).count]));
}

interface Case {
  name: string;
  /** a, b, c or d: the same kind on the compare service is named bw, cw, dw. */
  kind: string;
  label: string;
  url: string;
  headers: Record<string, string>;
  expect: string;
  /** The server process answering this case (for its CPU time). */
  pid: number;
  check: boolean;
}

interface Sample {
  name: string;
  round: number;
  rps: number;
  cpuUsPerRequest: number;
  /** Share of that CPU time spent in the kernel (loopback TCP, syscalls). */
  systemShare: number;
  p99Ms: number;
  statuses: Record<string, number>;
}

interface Row {
  name: string;
  label: string;
  rps: number;
  cpuUsPerRequest: number;
  systemShare: number;
  p99Ms: number;
  statuses: Record<string, number>;
}

async function main(): Promise<void> {
  if (!existsSync(DIST_MAIN)) throw new Error(`${DIST_MAIN} is missing: run \`npm run build\` (npm run bench does)`);
  const started = Date.now();
  const dataDir = mkdtempSync(join(tmpdir(), 'was-bench-'));
  const children: Child[] = [];
  const samples: Sample[] = [];
  const checks: Record<string, WriteCheck> = {};
  let db: SqliteDatabase.Database | undefined;
  try {
    log(
      `bench: ${cpus().length} CPUs, node ${process.version}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${ROUND_S} s per case ` +
        `(after a ${WARMUP_S} s warm-up), service LOG_LEVEL=${LOG_LEVEL}${COMPARE ? ` (and the same cases on a second service at LOG_LEVEL=${COMPARE_LEVEL})` : ''}`,
    );

    const barePort = await freePort();
    const bare = spawnChild(ROOT, ['--import', 'tsx', join(ROOT, 'bench/bare-server.ts')], { PORT: String(barePort) });
    children.push(bare);
    const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', resolve(process.env.BENCH_PROFILE)] : [];
    const nodeArgs = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ').filter(Boolean) : [];
    const startService = async (level: string, dir: string) => {
      const port = await freePort();
      const child = spawnChild(ROOT, [...profile, ...nodeArgs, DIST_MAIN, 'serve'], { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir, ADMIN_TOKEN, LOG_LEVEL: level, NODE_ENV: 'production' });
      children.push(child);
      return { child, base: `http://127.0.0.1:${port}` };
    };
    const { child: service, base } = await startService(LOG_LEVEL, dataDir);
    const compareDir = join(dataDir, 'compare');
    const compare = COMPARE && RUN_REQUESTS ? await startService(COMPARE_LEVEL, compareDir) : undefined;
    const bareUrl = `http://127.0.0.1:${barePort}/bare`;
    // The floor server (cases fb, fc, fd) at the service's log level, with its own two keys.
    const floorKeys = { open: `wask_${randomBytes(32).toString('base64url').slice(0, 43)}`, limited: `wask_${randomBytes(32).toString('base64url').slice(0, 43)}` };
    const floorPort = await freePort();
    const startFloor = (level: string, port: number) =>
      spawnChild(ROOT, ['--import', 'tsx', join(ROOT, 'bench/floor-server.ts')], { PORT: String(port), LOG_LEVEL: level, FLOOR_OPEN_KEY: floorKeys.open, FLOOR_LIMITED_KEY: floorKeys.limited });
    const floor = RUN_REQUESTS ? startFloor(LOG_LEVEL, floorPort) : undefined;
    // And one at the compare level (cases fbw, fcw, fdw): the floor without the request line.
    const floorComparePort = await freePort();
    const floorCompare = RUN_REQUESTS && COMPARE ? startFloor(COMPARE_LEVEL, floorComparePort) : undefined;
    for (const f of [floor, floorCompare]) if (f) children.push(f);
    const floorUrl = `http://127.0.0.1:${floorPort}/v1/usage`;
    const floorCompareUrl = `http://127.0.0.1:${floorComparePort}/v1/usage`;
    await Promise.all([
      waitReady(bareUrl, bare),
      waitReady(`${base}/readyz`, service),
      ...(compare ? [waitReady(`${compare.base}/readyz`, compare.child)] : []),
      ...(floor ? [waitReady(`http://127.0.0.1:${floorPort}/readyz`, floor)] : []),
      ...(floorCompare ? [waitReady(`http://127.0.0.1:${floorComparePort}/readyz`, floorCompare)] : []),
    ]);

    const unknownKey = `wask_${randomBytes(32).toString('base64url').slice(0, 43)}`;
    /** Cases (b), (c), (d) on one service; `suffix` names the compare service's copies (bw, cw, dw). */
    const serviceCases = async (svcBase: string, pid: number, suffix: string, check: boolean): Promise<Case[]> => {
      const open = await seedTenant(svcBase, 'bench-open', { pointsPerMinute: 1_000_000_000, pointsPerMonth: 1_000_000_000_000 });
      const limited = await seedTenant(svcBase, 'bench-limited', { pointsPerMinute: 3, pointsPerMonth: 1_000_000_000 });
      const limitedHeaders = { authorization: `Bearer ${limited.secret}`, 'x-service-workspace': limited.workspaceId };
      for (let i = 0; i < 5; i++) await fetch(`${svcBase}/v1/usage`, { headers: limitedHeaders }); // over its minute limit now
      const level = suffix ? ` [${COMPARE_LEVEL}]` : '';
      return [
        { name: `b${suffix}`, kind: 'b', label: `GET /v1/usage, valid key${level}`, url: `${svcBase}/v1/usage`, headers: { authorization: `Bearer ${open.secret}`, 'x-service-workspace': open.workspaceId }, expect: '200', pid, check: false },
        { name: `c${suffix}`, kind: 'c', label: `GET /v1/usage, unknown key (401)${level}`, url: `${svcBase}/v1/usage`, headers: { authorization: `Bearer ${unknownKey}`, 'x-service-workspace': open.workspaceId }, expect: '401', pid, check },
        { name: `d${suffix}`, kind: 'd', label: `GET /v1/usage, over limit (429)${level}`, url: `${svcBase}/v1/usage`, headers: limitedHeaders, expect: '429', pid, check },
      ];
    };
    const mainCases = await serviceCases(base, service.process.pid!, '', true);
    const compareCases = compare ? await serviceCases(compare.base, compare.child.process.pid!, 'w', false) : [];
    db = new SqliteDatabase(join(dataDir, 'service.db'), { readonly: true, fileMustExist: true });

    const floorCasesOf = (url: string, pid: number, suffix: string): Case[] => {
      const level = suffix ? ` [${COMPARE_LEVEL}]` : '';
      return [
        { name: `fb${suffix}`, kind: 'b', label: `floor of (b)${level}`, url, headers: { authorization: `Bearer ${floorKeys.open}` }, expect: '200', pid, check: false },
        { name: `fc${suffix}`, kind: 'c', label: `floor of (c)${level}`, url, headers: { authorization: `Bearer ${unknownKey}` }, expect: '401', pid, check: false },
        { name: `fd${suffix}`, kind: 'd', label: `floor of (d)${level}`, url, headers: { authorization: `Bearer ${floorKeys.limited}` }, expect: '429', pid, check: false },
      ];
    };
    const floorCases = [
      ...(floor ? floorCasesOf(floorUrl, floor.process.pid!, '') : []),
      ...(floorCompare ? floorCasesOf(floorCompareUrl, floorCompare.process.pid!, 'w') : []),
    ];
    const allCases: Case[] = [
      { name: 'a', kind: 'a', label: 'bare Fastify JSON route', url: bareUrl, headers: {}, expect: '200', pid: bare.process.pid!, check: false },
      // Each case beside its copy at the compare level and its floor, so they see the same load on the machine.
      ...mainCases.flatMap((c) => [c, ...compareCases.filter((w) => w.kind === c.kind), ...floorCases.filter((f) => f.kind === c.kind)]),
    ];
    const cases = RUN_REQUESTS ? allCases.filter((c) => !ONLY || c.kind === 'a' || ONLY.includes(c.kind)) : [];

    for (const c of cases) await load(c.url, c.headers, WARMUP_S);
    await sleep(FLUSH_WAIT_MS);
    let current = snapshot(db);
    for (let round = 1; round <= ROUNDS; round++) {
      for (const c of cases) {
        const before = current;
        const cpu0 = cpuTimes(c.pid);
        const result = await load(c.url, c.headers, ROUND_S);
        const cpu1 = cpuTimes(c.pid);
        const cpu = cpu1.user - cpu0.user + (cpu1.system - cpu0.system);
        const systemShare = (cpu1.system - cpu0.system) / cpu;
        const statuses = statusCounts(result);
        const total = Object.values(statuses).reduce((a, b) => a + b, 0);
        samples.push({ name: c.name, round, rps: result.requests.average, cpuUsPerRequest: total > 0 ? (cpu * 1e6) / total : NaN, systemShare, p99Ms: result.latency.p99, statuses });
        // (d) and its floor answer 200 to the first requests of each minute.
        const unexpected = Object.entries(statuses).filter(([code]) => code !== c.expect && !(c.kind === 'd' && code === '200'));
        if (unexpected.length > 0 || result.errors + result.timeouts > 0) {
          throw new Error(`(${c.name}) expected only ${c.expect}, got ${JSON.stringify(statuses)}, ${result.errors} errors, ${result.timeouts} timeouts`);
        }
        if (c.check || c.name === 'b') {
          // Let the admitted points of (b) and (d) reach the database before the next snapshot.
          await sleep(FLUSH_WAIT_MS);
          current = snapshot(db);
        }
        if (c.check) {
          const check = compareSnapshots(before, current, statuses['200'] ?? 0);
          const previous = checks[c.name];
          checks[c.name] = previous ? { ok: previous.ok && check.ok, notes: [...previous.notes, ...check.notes] } : check;
        }
      }
    }

    const median = (values: number[]) => {
      const sorted = values.filter(Number.isFinite).sort((x, y) => x - y);
      const mid = Math.floor(sorted.length / 2);
      return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
    };
    const rows: Row[] = cases.map((c) => {
      const mine = samples.filter((s) => s.name === c.name);
      const statuses: Record<string, number> = {};
      for (const s of mine) for (const [code, n] of Object.entries(s.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
      return {
        name: c.name,
        label: c.label,
        rps: median(mine.map((s) => s.rps)),
        cpuUsPerRequest: median(mine.map((s) => s.cpuUsPerRequest)),
        systemShare: median(mine.map((s) => s.systemShare)),
        p99Ms: median(mine.map((s) => s.p99Ms)),
        statuses,
      };
    });
    // Each ratio is taken within a round (the baseline ran seconds earlier under the same load)
    // and the median over rounds is reported, which damps other work on the machine.
    const ratioOf = (name: string) => {
      const perRound = (metric: 'rps' | 'cpu') =>
        median(
          Array.from({ length: ROUNDS }, (_, i) => {
            const a = samples.find((s) => s.name === 'a' && s.round === i + 1);
            const x = samples.find((s) => s.name === name && s.round === i + 1);
            if (!a || !x) return NaN;
            return metric === 'rps' ? x.rps / a.rps : a.cpuUsPerRequest / x.cpuUsPerRequest;
          }),
        );
      return { rps: perRound('rps'), cpu: perRound('cpu') };
    };
    const goals: [string, number][] = [
      ['b', 0.5],
      ['c', 0.6],
      ['d', 0.6],
    ];
    const ratios = goals
      .filter(([name]) => cases.some((c) => c.name === name))
      .map(([name, goal]) => {
        const r = ratioOf(name);
        const w = cases.some((c) => c.name === `${name}w`) ? ratioOf(`${name}w`) : undefined;
        const f = cases.some((c) => c.name === `f${name}`) ? ratioOf(`f${name}`) : undefined;
        const fw = cases.some((c) => c.name === `f${name}w`) ? ratioOf(`f${name}w`) : undefined;
        return {
          name: `${name}/a`,
          value: r.rps,
          cpuRatio: r.cpu,
          goal,
          verdict: r.rps >= goal ? 'PASS' : 'MISS',
          compare: w ? { level: COMPARE_LEVEL, value: w.rps, cpuRatio: w.cpu, floor: fw ? { value: fw.rps, cpuRatio: fw.cpu } : undefined } : undefined,
          // The floor's own ratio, and the service's share of it (the two ratios' quotient).
          floor: f ? { value: f.rps, cpuRatio: f.cpu, serviceShare: r.rps / f.rps } : undefined,
        };
      });
    // (l) The request log line: the same route on the service at LOG_LEVEL (one line per request)
    // and on the one at the compare level (no request line), CPU per request of each in the same
    // round; the median over rounds of the difference is what a line costs.
    const logLine = ['b', 'c', 'd']
      .filter((name) => LOG_LEVEL === 'info' && COMPARE_LEVEL !== 'info' && COMPARE_LEVEL !== 'debug' && COMPARE_LEVEL !== 'trace' && cases.some((c) => c.name === `${name}w`) && cases.some((c) => c.name === name))
      .map((name) => {
        const perRound = Array.from({ length: ROUNDS }, (_, i) => {
          const x = samples.find((s) => s.name === name && s.round === i + 1);
          const w = samples.find((s) => s.name === `${name}w` && s.round === i + 1);
          return x && w ? x.cpuUsPerRequest - w.cpuUsPerRequest : NaN;
        });
        const value = median(perRound);
        return { name, route: cases.find((c) => c.name === name)!.label, usPerLine: value, perRound, goal: LOG_LINE_GOAL_US, verdict: value <= LOG_LINE_GOAL_US ? 'PASS' : 'MISS' };
      });

    log('');
    log('run  what                                      req/s  CPU µs/req  (kernel)  p99 ms  statuses (all rounds)');
    for (const r of rows) {
      log(
        `(${r.name})  ${r.label.padEnd(40)} ${r.rps.toFixed(0).padStart(6)}  ${r.cpuUsPerRequest.toFixed(1).padStart(10)}  ${`${(r.systemShare * 100).toFixed(0)}%`.padStart(8)}  ` +
          `${String(r.p99Ms).padStart(6)}  ${JSON.stringify(r.statuses)}`,
      );
    }
    log('');
    log(
      `ratio  req/s ratio  goal   verdict   CPU-time ratio${COMPARE ? `   at LOG_LEVEL=${COMPARE_LEVEL}: req/s ratio, CPU-time ratio (its floor's)` : ''}   floor: req/s ratio, CPU-time ratio, service/floor   ` +
        `(LOG_LEVEL=${LOG_LEVEL}; CPU-time ratio: baseline CPU per request / this one)`,
    );
    for (const r of ratios) {
      const wf = r.compare?.floor ? ` (${r.compare.floor.value.toFixed(2)}, ${r.compare.floor.cpuRatio.toFixed(2)})` : ' '.repeat(14);
      const w = r.compare ? `   ${' '.repeat(17 + COMPARE_LEVEL.length)}${r.compare.value.toFixed(2).padStart(5)}  ${r.compare.cpuRatio.toFixed(2).padStart(5)}${wf}` : '';
      const f = r.floor ? `   ${r.floor.value.toFixed(2).padStart(12)}  ${r.floor.cpuRatio.toFixed(2).padStart(5)}  ${r.floor.serviceShare.toFixed(2).padStart(5)}` : '';
      log(`${r.name.padEnd(6)} ${r.value.toFixed(2).padStart(11)}  >=${r.goal.toFixed(1)}  ${r.verdict.padEnd(8)}  ${r.cpuRatio.toFixed(2).padStart(14)}${w}${f}`);
    }
    if (logLine.length > 0) {
      log('');
      log(`(l) request log line: CPU per request at LOG_LEVEL=${LOG_LEVEL} minus at ${COMPARE_LEVEL}, same route, ${CONNECTIONS} connections (median of the per-round differences)`);
      for (const l of logLine) {
        log(`    ${l.name}  ${l.route.padEnd(40)} ${l.usPerLine.toFixed(1).padStart(5)} µs  goal <= ${l.goal}  ${l.verdict}   (rounds: ${l.perRound.map((v) => v.toFixed(1)).join(', ')})`);
      }
    }
    log('');
    for (const [name, check] of Object.entries(checks)) {
      log(`(${name}) refused requests wrote nothing: ${check.ok ? 'OK' : 'FAILED'}${check.notes.length ? ` (${check.notes.join('; ')})` : ''}`);
    }

    let media: MediaBenchResult | undefined;
    if (RUN_MEDIA) {
      const tenant = await seedTenant(base, 'bench-media', { pointsPerMinute: 1_000_000, pointsPerMonth: 1_000_000_000 }, ['media:read', 'media:write']);
      media = await runMediaBench({ base, workDir: dataDir, secret: tenant.secret, workspaceId: tenant.workspaceId, rounds: MEDIA_ROUNDS });
      log('');
      for (const line of mediaReport(media)) log(line);
    }

    // bench/webhooks.ts (issue 5): webhook deliveries/s vs plain signed undici POSTs; BENCH_ONLY=w alone.
    let webhooks: WebhookBenchResult | undefined;
    if (!ONLY || ONLY.includes('w')) {
      log('');
      webhooks = await runWebhookBench();
      reportWebhookBench(webhooks);
    }

    // bench/providers.ts: synchronous chat.generate through the service vs direct openai-package
    // calls to the same fake; BENCH_ONLY=p alone.
    let providers: ProviderBenchResult | undefined;
    if (!ONLY || ONLY.includes('p')) {
      log('');
      providers = await runProviderBench();
      reportProviderBench(providers);
    }

    // bench/local-video.ts and bench/local-speech.ts: video.edit with ffmpeg and speech.generate
    // with espeak-ng through the service vs the same program run directly (goal <= 1.3x each);
    // BENCH_ONLY=v or s alone. They need ffmpeg and espeak-ng installed.
    let localVideo: LocalVideoBenchResult | undefined;
    if (!ONLY || ONLY.includes('v')) {
      log('');
      localVideo = await runLocalVideoBench();
      reportLocalVideoBench(localVideo);
    }
    let localSpeech: LocalSpeechBenchResult | undefined;
    if (!ONLY || ONLY.includes('s')) {
      log('');
      localSpeech = await runLocalSpeechBench();
      reportLocalSpeechBench(localSpeech);
    }

    // bench/jobs.ts (issue 3): admissions, job reads (SQLite and PostgreSQL), end to end vs
    // graphile-worker, drain, complete output; BENCH_ONLY=j alone, BENCH_JOBS picks cases.
    let jobs: JobBenchRatio[] | undefined;
    if (!ONLY || ONLY.includes('j')) jobs = await runJobBenches();

    // bench/sdk-output.ts (issue 17): the SDK's verifying output reader vs a bare fetch loop; BENCH_ONLY=k alone.
    let sdk: SdkBenchResult | undefined;
    if (!ONLY || ONLY.includes('k')) {
      log('\nSDK complete-output reader (16 MiB) vs a bare fetch loop of the same pages');
      sdk = await runSdkBench();
      reportSdkBench(sdk);
    }

    // bench/cli.ts (q, issue 38): the operator CLI's help and a read as fresh processes; BENCH_ONLY=q alone.
    let cli: CliBenchCase[] | undefined;
    if (!ONLY || ONLY.includes('q')) {
      log('\nOperator CLI answer times (fresh processes)');
      cli = runCliBench();
      reportCliBench(cli);
    }

    // bench/idle.ts (i, issue 38): start-up to ready, the idle process's memory, after load and during a 100 MB upload; BENCH_ONLY=i alone.
    let idle: IdleBenchCase[] | undefined;
    if (!ONLY || ONLY.includes('i')) {
      log('\nThe idle process: start-up and memory (default service, embedded SQLite)');
      idle = await runIdleBench();
      reportIdleBench(idle);
    }

    // bench/costs.ts (y, issue 36): GET /v1/costs over a month of 1,000,000 ledger rows, SQLite and PostgreSQL; BENCH_ONLY=y alone.
    let costs: CostBenchCase[] | undefined;
    if (!ONLY || ONLY.includes('y')) {
      log('\nCost analytics at scale');
      costs = await runCostBench();
      reportCostBench(costs);
    }

    const results = {
      at: new Date().toISOString(),
      machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
      settings: { connections: CONNECTIONS, rounds: ROUNDS, roundS: ROUND_S, warmupS: WARMUP_S, database: 'sqlite', serviceLogLevel: LOG_LEVEL, compareLogLevel: COMPARE ? COMPARE_LEVEL : null },
      runs: rows,
      samples,
      ratios,
      logLine,
      writeChecks: checks,
      media,
      webhooks,
      providers,
      localVideo,
      localSpeech,
      jobs,
      sdk,
      cli,
      idle,
      costs,
      elapsedS: Math.round((Date.now() - started) / 1000),
    };
    mkdirSync(join(ROOT, '.bench'), { recursive: true });
    writeFileSync(join(ROOT, '.bench/results.json'), `${JSON.stringify(results, null, 2)}\n`);
    log(`\nwritten .bench/results.json (${results.elapsedS} s)`);
    if (Object.values(checks).some((c) => !c.ok) || providers?.ok === false || localVideo?.ok === false || localSpeech?.ok === false || costs?.some((c) => c.verdict === 'FAIL')) process.exitCode = 1;
  } finally {
    db?.close();
    await Promise.all(children.map((c) => c.stop()));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
