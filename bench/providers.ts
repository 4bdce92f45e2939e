/**
 * (p) Provider calls: synchronous `chat.generate` runs per second through the service
 * (`POST /v1/runs` → the openai provider → an OpenAI-compatible fake with no latency), against the
 * same chat completion called directly with the `openai` package against the same fake, with the
 * same concurrency (8), in the same run. Goal: service / direct >= 0.5, i.e. the service's own
 * work per real provider call (HTTP, key, idempotency claim, points, credit hold, job row, the
 * provider layer, settlement, the stored response) stays small next to the call itself.
 *
 * Three processes besides the measuring one: the fake (bench/fake-openai-server.ts, starting
 * FakeOpenAi of test/support/fake-openai.ts, so neither side pays for it in its own process) and
 * the service exactly as `npm start` runs it (`node dist/main.js serve`, built by `npm run bench`)
 * on embedded SQLite in a temp directory, with the default LOG_LEVEL (info) and a providers file
 * routing chat.generate to the fake (`privateNetwork`, an operator key from the environment).
 * One tenant is seeded through the admin API: a pro workspace with point limits raised out of the
 * way, a large credit grant and a key limited to tools:run and chat.generate.
 *
 *   direct:  8 async loops, each `openai.chat.completions.create({ model, messages, max_tokens: 16 })`
 *            with one shared client (maxRetries 0), completions per second;
 *   service: 8 async loops, each `POST /v1/runs` with a fresh Idempotency-Key over a kept-alive
 *            undici Agent; a run counts when it answers 200 with data.status `completed`, the
 *            fake's reply and the cost its usage implies. Anything else is an error: reported,
 *            and the bench's correctness check fails (exit 1).
 *
 * After a warm-up (10 s of the service, whose first seconds cost up to twice the CPU per run while
 * V8 still compiles; 3 s of the direct side), rounds alternate direct and service (BENCH_ROUNDS, 3,
 * of BENCH_ROUND_S seconds, 3); the ratio is the median of the per-round ratios. Beside it: CPU µs
 * per call of the service process (/proc; all threads, and its main thread alone), of the
 * measuring process in both modes, and of the fake.
 * The CPU-time ratio (direct caller's CPU per completion / service's per run) is the steadier
 * measure on a busy machine.
 *
 * Run alone: `npm run build && node --import tsx bench/providers.ts`; in `npm run bench` it is
 * `p` (BENCH_ONLY=p). Tunables: BENCH_PROVIDER_CONCURRENCY (8), BENCH_ROUNDS, BENCH_ROUND_S,
 * BENCH_PROVIDER_WARMUP_S (10), BENCH_PROVIDER_LOG_LEVEL (unset: the service's default, info),
 * BENCH_PROFILE=DIR (a V8 CPU profile of the service process), BENCH_NODE_ARGS (extra node flags
 * for the service process).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import OpenAI from 'openai';
import { Agent, request } from 'undici';
import { cpuTimes, freePort, spawnChild, waitReady, type Child } from './processes.js';
import { median, seedRunTenant } from './jobs-support.js';

const ROOT = resolve(import.meta.dirname, '..');
const DIST_MAIN = join(ROOT, 'dist/main.js');
const CONCURRENCY = Number(process.env.BENCH_PROVIDER_CONCURRENCY ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ROUND_S = Number(process.env.BENCH_ROUND_S ?? 3);
/** Warm-up of the service side; the direct side gets at most 3 s (it is steady from its first second). */
const WARMUP_S = Number(process.env.BENCH_PROVIDER_WARMUP_S ?? 10);
const DIRECT_WARMUP_S = Math.min(3, WARMUP_S);
const LOG_LEVEL = process.env.BENCH_PROVIDER_LOG_LEVEL;
const GOAL = 0.5;
const MODEL = 'bench-model';
const MESSAGES = [{ role: 'user' as const, content: 'Say hello' }];
const MAX_TOKENS = 16;
const PRICE = { baseMillicents: 20, inputTokenMillicents: 1, outputTokenMillicents: 3 };
/** What the fake answers by default (test/support/fake-openai.ts), and what that usage costs. */
const FAKE_REPLY = 'Hello from the fake.';
const FAKE_USAGE = { prompt_tokens: 17, completion_tokens: 9 };
const EXPECTED_COST = PRICE.baseMillicents + PRICE.inputTokenMillicents * FAKE_USAGE.prompt_tokens + PRICE.outputTokenMillicents * FAKE_USAGE.completion_tokens;

export interface ProviderRound {
  directRps: number;
  serviceRps: number;
  ratio: number;
  /** Measuring process CPU µs per completion, direct (the SDK call: everything the caller pays). */
  directCpuUs: number;
  /** Service process CPU µs per run (all its threads). */
  serviceCpuUs: number;
  /** The part of it on the service's main thread (the event loop, which bounds its throughput). */
  serviceMainCpuUs: number;
  /** Share of wall time the service's main thread was busy during the round. */
  serviceMainBusy: number;
  /** Measuring process CPU µs per run (the HTTP client of the service). */
  clientCpuUs: number;
  /** The fake's CPU µs per call, in either mode. */
  fakeCpuUsDirect: number;
  fakeCpuUsService: number;
  directP50Ms: number;
  serviceP50Ms: number;
}

export interface ProviderBenchResult {
  name: 'p';
  label: string;
  value: number;
  goal: number;
  verdict: 'PASS' | 'MISS';
  /** Every answer was a completed run with the fake's reply and the expected cost. */
  ok: boolean;
  errors: { count: number; samples: string[] };
  detail: {
    concurrency: number;
    roundS: number;
    warmupS: number;
    serviceLogLevel: string;
    /** Median over rounds of direct CPU µs per completion / service process CPU µs per run. */
    cpuRatio: number;
    serviceCpuUs: number;
    serviceMainCpuUs: number;
    directCpuUs: number;
    clientCpuUs: number;
    rounds: ProviderRound[];
  };
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** Starts bench/fake-openai-server.ts; resolves with its base URL (`…/v1`) once it listens. */
async function startFake(): Promise<{ baseUrl: string; pid: number; stop(): Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/fake-openai-server.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const kill = () => child.kill('SIGTERM');
  process.on('exit', kill);
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const baseUrl = await new Promise<string>((res, rej) => {
    let buf = '';
    child.stdout!.setEncoding('utf8').on('data', (c: string) => {
      buf += c;
      const m = /URL (\S+)\n/.exec(buf);
      if (m) res(m[1]!);
    });
    child.on('exit', (code) => rej(new Error(`fake OpenAI server exited ${code}`)));
  });
  return {
    baseUrl,
    pid: child.pid!,
    async stop() {
      process.off('exit', kill);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** CPU seconds of a process's main thread (its thread id is its pid; Linux /proc, NaN elsewhere). */
function mainThreadCpuTimes(pid: number): { user: number; system: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
  } catch {
    return { user: NaN, system: NaN };
  }
}

/** Counts errors and keeps a few distinct descriptions. */
class Errors {
  count = 0;
  readonly samples: string[] = [];
  add(what: string): void {
    this.count++;
    if (this.samples.length < 5 && !this.samples.includes(what)) this.samples.push(what.slice(0, 500));
  }
}

interface Timed {
  done: number;
  seconds: number;
  p50Ms: number;
}

/** CONCURRENCY loops calling `once` until `seconds` have passed; completions and median latency. */
async function loops(seconds: number, once: () => Promise<boolean>): Promise<Timed> {
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const latencies: number[] = [];
  let done = 0;
  const loop = async () => {
    while (performance.now() < deadline) {
      const t = performance.now();
      if (await once()) {
        done++;
        latencies.push(performance.now() - t);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  return { done, seconds: (performance.now() - started) / 1000, p50Ms: median(latencies) };
}

export async function runProviderBench(): Promise<ProviderBenchResult> {
  if (!existsSync(DIST_MAIN)) throw new Error(`${DIST_MAIN} is missing: run \`npm run build\` (npm run bench does)`);
  const dir = mkdtempSync(join(tmpdir(), 'was-bench-providers-'));
  const adminToken = `bench-admin-${randomBytes(8).toString('hex')}`;
  const operatorKey = `sk-bench-${randomBytes(12).toString('hex')}`;
  let fake: Awaited<ReturnType<typeof startFake>> | undefined;
  let service: Child | undefined;
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: CONCURRENCY });
  try {
    fake = await startFake();
    const providersFile = join(dir, 'providers.json');
    writeFileSync(
      providersFile,
      JSON.stringify({
        providers: { fake: { type: 'openai', baseUrl: fake.baseUrl, apiKeyEnv: 'BENCH_OPENAI_KEY', privateNetwork: true } },
        operations: { 'chat.generate': { provider: 'fake', model: MODEL, price: PRICE } },
      }),
    );
    const port = await freePort();
    const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', resolve(process.env.BENCH_PROFILE)] : [];
    const nodeArgs = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ').filter(Boolean) : [];
    service = spawnChild(ROOT, [...profile, ...nodeArgs, DIST_MAIN, 'serve'], {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: join(dir, 'data'),
      ADMIN_TOKEN: adminToken,
      NODE_ENV: 'production',
      PROVIDERS_FILE: providersFile,
      BENCH_OPENAI_KEY: operatorKey,
      ...(LOG_LEVEL ? { LOG_LEVEL } : {}),
    });
    const base = `http://127.0.0.1:${port}`;
    await waitReady(`${base}/readyz`, service);
    const servicePid = service.process.pid!;
    const serviceLogLevel = LOG_LEVEL ?? 'info (default)';
    log(
      `(p) provider calls: ${cpus().length} CPUs, ${CONCURRENCY} concurrent clients, ${ROUNDS} rounds of ${ROUND_S} s per side ` +
        `(after a warm-up of ${DIRECT_WARMUP_S} s direct, ${WARMUP_S} s service), service LOG_LEVEL=${serviceLogLevel}, fake at ${fake.baseUrl}`,
    );

    // The tenant, through the admin API.
    const { secret, workspaceId } = await seedRunTenant(base, { name: 'bench-providers', scopes: ['tools:run'], operations: ['chat.generate'], credits: 1_000_000_000_000, adminToken });

    const errors = new Errors();
    const openai = new OpenAI({ apiKey: operatorKey, baseURL: fake.baseUrl, maxRetries: 0 });
    const direct = async (): Promise<boolean> => {
      try {
        const answer = await openai.chat.completions.create({ model: MODEL, messages: MESSAGES, max_tokens: MAX_TOKENS });
        if (answer.choices[0]?.message.content === FAKE_REPLY) return true;
        errors.add(`direct: unexpected answer ${JSON.stringify(answer)}`);
      } catch (err) {
        errors.add(`direct: ${String(err)}`);
      }
      return false;
    };

    const runsUrl = `${base}/v1/runs`;
    const runHeaders = { authorization: `Bearer ${secret}`, 'x-service-workspace': workspaceId, 'content-type': 'application/json' };
    const runBody = JSON.stringify({ operationId: 'chat.generate', input: { messages: MESSAGES, maxTokens: MAX_TOKENS } });
    const viaService = async (): Promise<boolean> => {
      try {
        const res = await request(runsUrl, { dispatcher: agent, method: 'POST', headers: { ...runHeaders, 'idempotency-key': randomUUID() }, body: runBody });
        const json = (await res.body.json()) as { data?: { status?: string; costMillicents?: number; result?: { message?: { content?: string } } } };
        const data = json.data;
        if (res.statusCode === 200 && data?.status === 'completed' && data.result?.message?.content === FAKE_REPLY && data.costMillicents === EXPECTED_COST) return true;
        errors.add(`service: ${res.statusCode} ${JSON.stringify(json)}`);
      } catch (err) {
        errors.add(`service: ${String(err)}`);
      }
      return false;
    };

    // Warm-up of both paths (JIT, connection pools, caches), not measured.
    await loops(DIRECT_WARMUP_S, direct);
    await loops(WARMUP_S, viaService);

    const rounds: ProviderRound[] = [];
    const cpuUs = (a: { user: number; system: number }, b: { user: number; system: number }) => (b.user - a.user + (b.system - a.system)) * 1e6;
    const per = (us: number, n: number) => (n > 0 ? Math.round(us / n) : NaN);
    for (let round = 0; round < ROUNDS; round++) {
      const fake0 = cpuTimes(fake.pid);
      let own = process.cpuUsage();
      const d = await loops(ROUND_S, direct);
      const directOwn = process.cpuUsage(own);
      const fake1 = cpuTimes(fake.pid);

      const svc0 = cpuTimes(servicePid);
      const main0 = mainThreadCpuTimes(servicePid);
      own = process.cpuUsage();
      const s = await loops(ROUND_S, viaService);
      const clientOwn = process.cpuUsage(own);
      const svc1 = cpuTimes(servicePid);
      const main1 = mainThreadCpuTimes(servicePid);
      const fake2 = cpuTimes(fake.pid);

      const directRps = d.done / d.seconds;
      const serviceRps = s.done / s.seconds;
      rounds.push({
        directRps: Math.round(directRps),
        serviceRps: Math.round(serviceRps),
        ratio: serviceRps / directRps,
        directCpuUs: per(directOwn.user + directOwn.system, d.done),
        serviceCpuUs: per(cpuUs(svc0, svc1), s.done),
        serviceMainCpuUs: per(cpuUs(main0, main1), s.done),
        serviceMainBusy: Math.round((cpuUs(main0, main1) / (s.seconds * 1e6)) * 100) / 100,
        clientCpuUs: per(clientOwn.user + clientOwn.system, s.done),
        fakeCpuUsDirect: per(cpuUs(fake0, fake1), d.done),
        fakeCpuUsService: per(cpuUs(fake1, fake2), s.done),
        directP50Ms: Math.round(d.p50Ms * 100) / 100,
        serviceP50Ms: Math.round(s.p50Ms * 100) / 100,
      });
    }

    const value = median(rounds.map((r) => r.ratio));
    const result: ProviderBenchResult = {
      name: 'p',
      label: 'synchronous chat.generate runs/s through the service / direct openai-package calls, same fake',
      value,
      goal: GOAL,
      verdict: value >= GOAL ? 'PASS' : 'MISS',
      ok: errors.count === 0,
      errors: { count: errors.count, samples: errors.samples },
      detail: {
        concurrency: CONCURRENCY,
        roundS: ROUND_S,
        warmupS: WARMUP_S,
        serviceLogLevel,
        cpuRatio: median(rounds.map((r) => r.directCpuUs / r.serviceCpuUs)),
        serviceCpuUs: median(rounds.map((r) => r.serviceCpuUs)),
        serviceMainCpuUs: median(rounds.map((r) => r.serviceMainCpuUs)),
        directCpuUs: median(rounds.map((r) => r.directCpuUs)),
        clientCpuUs: median(rounds.map((r) => r.clientCpuUs)),
        rounds,
      },
    };
    return result;
  } finally {
    await agent.close();
    await service?.stop();
    await fake?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function reportProviderBench(r: ProviderBenchResult): void {
  const d = r.detail;
  log(
    `(p) ${r.label}: ${r.value.toFixed(2)} (goal >= ${r.goal}) ${r.verdict}; CPU-time ratio ${d.cpuRatio.toFixed(2)} ` +
      `(service ${d.serviceCpuUs} µs per run, ${d.serviceMainCpuUs} of them on its main thread; direct caller ${d.directCpuUs} µs per completion; service's client ${d.clientCpuUs} µs per run)`,
  );
  for (const [i, x] of d.rounds.entries()) {
    log(
      `    round ${i + 1}: direct ${x.directRps}/s (${x.directCpuUs} µs CPU each, p50 ${x.directP50Ms} ms), ` +
        `service ${x.serviceRps}/s (${x.serviceCpuUs} µs service CPU, ${x.serviceMainCpuUs} main thread, busy ${Math.round(x.serviceMainBusy * 100)}%; ${x.clientCpuUs} µs client each; p50 ${x.serviceP50Ms} ms), ` +
        `fake ${x.fakeCpuUsDirect}/${x.fakeCpuUsService} µs per call, ratio ${x.ratio.toFixed(2)}`,
    );
  }
  log(`(p) every answer a completed run with the fake's reply and cost ${EXPECTED_COST}: ${r.ok ? 'OK' : `FAILED (${r.errors.count} errors: ${r.errors.samples.join(' | ')})`}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runProviderBench().then(
    (r) => {
      reportProviderBench(r);
      if (!r.ok) process.exitCode = 1;
    },
    (err: unknown) => {
      process.stderr.write(`provider bench failed: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
