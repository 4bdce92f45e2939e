/**
 * Shared pieces of the job benches (bench/jobs.ts): starting the service as a child process the
 * way `npm start` runs it, seeding a tenant that may run image.generate with raised limits,
 * loading a route in interleaved rounds against a baseline, and the ratio arithmetic.
 */
import { join, resolve } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { cpuTimes, freePort, spawnChild, waitReady, type Child } from './processes.js';

export const ROOT = resolve(import.meta.dirname, '..');
export const ADMIN_TOKEN = `bench-admin-${randomBytes(8).toString('hex')}`;
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
export const ROUND_S = Number(process.env.BENCH_ROUND_S ?? 3);
/** The default log level, as users run the service (BENCH_LOG_LEVEL=warn for comparison). */
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';

/** The service entry: the built dist/main.js (npm run bench builds it), or the sources with BENCH_FROM_SOURCE=1. */
function serviceArgs(): string[] {
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', resolve(process.env.BENCH_PROFILE)] : [];
  const extra = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ').filter(Boolean) : [];
  const entry = process.env.BENCH_FROM_SOURCE === '1' ? ['--import', 'tsx', join(ROOT, 'src/main.ts')] : [join(ROOT, 'dist/main.js')];
  return [...profile, ...extra, ...entry];
}

export interface Service {
  child: Child;
  base: string;
  pid: number;
}

export async function startService(verb: 'serve' | 'worker', env: Record<string, string>): Promise<Service> {
  const port = await freePort();
  const child = spawnChild(ROOT, [...serviceArgs(), verb], {
    PORT: String(port),
    HOST: '127.0.0.1',
    ADMIN_TOKEN,
    LOG_LEVEL,
    NODE_ENV: 'production',
    SECRET_KEY: 'bench-secret-key-0123456789abcdef0123456789abcdef',
    ...env,
  });
  const base = `http://127.0.0.1:${port}`;
  if (verb === 'serve') await waitReady(`${base}/readyz`, child, 60_000);
  return { child, base, pid: child.process.pid! };
}

/** A baseline server (bench/bare-server.ts by default), ready once `path` answers; `url` is that path's, `base` the server's. */
export async function startBare(script: string, env: Record<string, string> = {}, path = '/bare'): Promise<{ child: Child; base: string; url: string; pid: number }> {
  const port = await freePort();
  const child = spawnChild(ROOT, ['--import', 'tsx', join(ROOT, script)], { PORT: String(port), ...env });
  const base = `http://127.0.0.1:${port}`;
  const url = `${base}${path}`;
  await waitReady(url, child);
  return { child, base, url, pid: child.process.pid! };
}

async function admin<T = any>(base: string, path: string, body: unknown, token = ADMIN_TOKEN): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { data: T };
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

export interface JobTenant {
  workspaceId: string;
  secret: string;
  headers: Record<string, string>;
}

/** A pro workspace with effectively unlimited points, queue and credits, and a key that may run image.generate. */
export async function seedJobTenant(base: string, name: string, runningJobs = 64): Promise<JobTenant> {
  const { user } = await admin(base, '/admin/v1/users', { email: `${name}-${randomBytes(4).toString('hex')}@bench.example`, name });
  const { workspace } = await admin(base, '/admin/v1/workspaces', { name, plan: 'pro', ownerUserId: user.id });
  await admin(base, `/admin/v1/workspaces/${workspace.id}/settings`, {
    limits: { pointsPerMinute: 1_000_000_000, pointsPerMonth: 1_000_000_000_000, waitingJobs: 10_000_000, runningJobs },
  });
  for (let i = 0; i < 4; i++) await admin(base, `/admin/v1/workspaces/${workspace.id}/credits`, { amountMillicents: 1_000_000_000 });
  const { secret } = await admin(base, '/admin/v1/keys', {
    userId: user.id,
    workspaceIds: [workspace.id],
    scopes: ['tools:run', 'jobs:read'],
    operations: ['image.generate'],
    transports: ['rest'],
  });
  return { workspaceId: workspace.id, secret, headers: { authorization: `Bearer ${secret}`, 'x-service-workspace': workspace.id } };
}

/**
 * A pro workspace whose points never refuse, with `credits` and a REST key of `scopes` for
 * `operations` (the provider and local engine benches), created through the admin API.
 */
export async function seedRunTenant(
  base: string,
  o: { name: string; scopes: string[]; operations: string[]; credits: number; adminToken?: string },
): Promise<JobTenant> {
  const token = o.adminToken ?? ADMIN_TOKEN;
  const { user } = await admin(base, '/admin/v1/users', { email: `${o.name}-${randomBytes(4).toString('hex')}@bench.example`, name: o.name }, token);
  const { workspace } = await admin(base, '/admin/v1/workspaces', { name: o.name, plan: 'pro', ownerUserId: user.id }, token);
  await admin(base, `/admin/v1/workspaces/${workspace.id}/settings`, { limits: { pointsPerMinute: 1_000_000_000, pointsPerMonth: 1_000_000_000_000 } }, token);
  await admin(base, `/admin/v1/workspaces/${workspace.id}/credits`, { amountMillicents: o.credits }, token);
  const { secret } = await admin(base, '/admin/v1/keys', { userId: user.id, workspaceIds: [workspace.id], scopes: o.scopes, operations: o.operations, transports: ['rest'] }, token);
  return { workspaceId: workspace.id, secret, headers: { authorization: `Bearer ${secret}`, 'x-service-workspace': workspace.id } };
}

/** The run body of the job benches: the cheapest image.generate, zero simulated delay. */
export function runBody(extra = ''): string {
  return JSON.stringify({ operationId: 'image.generate', input: { prompt: `bench [sim:delay=0]${extra}`, width: 256, height: 256 } });
}

export async function admitOne(base: string, t: JobTenant, extra = ''): Promise<string> {
  const res = await fetch(`${base}/v1/runs`, {
    method: 'POST',
    headers: { ...t.headers, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: runBody(extra),
  });
  const json = (await res.json()) as { data: { jobId: string } };
  if (res.status !== 202) throw new Error(`POST /v1/runs: ${res.status} ${JSON.stringify(json)}`);
  return json.data.jobId;
}

export interface LoadCase {
  name: string;
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** A fresh Idempotency-Key on every request. */
  uniqueIdempotencyKey?: boolean;
  /** Collects `data.jobId` of every answer (queued admissions: each must name a new job). */
  jobIds?: string[];
  expect: number;
  pid: number;
}

export interface Sample {
  name: string;
  round: number;
  rps: number;
  cpuUsPerRequest: number;
  p99Ms: number;
  statuses: Record<string, number>;
}

/** `data.jobId` of a run's answer ('' when it has none). */
function jobIdOf(body: string): string {
  try {
    return String((JSON.parse(body) as { data?: { jobId?: unknown } }).data?.jobId ?? '');
  } catch {
    return '';
  }
}

export async function load(c: LoadCase, durationS: number): Promise<Sample> {
  const cpu0 = cpuTimes(c.pid);
  const result = await autocannon({
    url: c.url,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: durationS,
    method: c.method ?? 'GET',
    headers: c.headers ?? {},
    ...(c.body !== undefined ? { body: c.body } : {}),
    ...(c.uniqueIdempotencyKey || c.jobIds
      ? {
          requests: [
            {
              ...(c.uniqueIdempotencyKey ? { setupRequest: (req: any) => ({ ...req, headers: { ...req.headers, 'idempotency-key': randomUUID() } }) } : {}),
              ...(c.jobIds ? { onResponse: (_status: number, body: string) => c.jobIds!.push(jobIdOf(body)) } : {}),
            },
          ],
        }
      : {}),
  } as any);
  const cpu1 = cpuTimes(c.pid);
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, (s as { count: number }).count]));
  const total = Object.values(statuses).reduce((a, b) => a + b, 0);
  const unexpected = Object.keys(statuses).filter((code) => code !== String(c.expect));
  if (unexpected.length > 0 || result.errors + result.timeouts > 0) {
    throw new Error(`(${c.name}) expected only ${c.expect}, got ${JSON.stringify(statuses)}, ${result.errors} errors, ${result.timeouts} timeouts`);
  }
  const cpu = cpu1.user - cpu0.user + (cpu1.system - cpu0.system);
  return { name: c.name, round: 0, rps: result.requests.average, cpuUsPerRequest: total > 0 ? (cpu * 1e6) / total : NaN, p99Ms: result.latency.p99, statuses };
}

export function median(values: number[]): number {
  const sorted = values.filter(Number.isFinite).sort((x, y) => x - y);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Baseline and case loaded in interleaved rounds (warm-up first); the ratio is the median of the
 * per-round ratios of requests per second, so other load on the machine hits both alike. `others`
 * run in the same rounds, each compared with the baseline too (a floor beside the case, say).
 */
export async function compareRounds(
  baseline: LoadCase,
  subject: LoadCase,
  ...others: LoadCase[]
): Promise<{ ratio: number; cpuRatio: number; samples: Sample[]; others: { name: string; ratio: number; cpuRatio: number }[] }> {
  const cases = [baseline, subject, ...others];
  for (const c of cases) await load(c, 1);
  const samples: Sample[] = [];
  for (let round = 1; round <= ROUNDS; round++) for (const c of cases) samples.push({ ...(await load(c, ROUND_S)), round });
  const n = cases.length;
  const per = (k: number, f: (a: Sample, x: Sample) => number) => median(Array.from({ length: ROUNDS }, (_, i) => f(samples[n * i]!, samples[n * i + k]!)));
  const rps = (a: Sample, x: Sample) => x.rps / a.rps;
  const cpu = (a: Sample, x: Sample) => a.cpuUsPerRequest / x.cpuUsPerRequest;
  return {
    ratio: per(1, rps),
    cpuRatio: per(1, cpu),
    samples,
    others: others.map((o, i) => ({ name: o.name, ratio: per(i + 2, rps), cpuRatio: per(i + 2, cpu) })),
  };
}

export { sleep, type Child } from './processes.js';
