/**
 * (w) Webhook deliveries per second through the real delivery worker (claim with lease, re-checks,
 * signing, the egress guard, outcome written under the lease) to a local HTTPS receiver, against
 * a plain undici loop of signed HTTPS POSTs over kept-alive connections to the same receiver with
 * the same concurrency, in the same run. Goal: worker / baseline >= 0.7.
 *
 * The receiver is a child process (node:https with the test-only certificate of test/fixtures/tls,
 * answering 200 to everything); the measuring process runs in a child started with
 * NODE_EXTRA_CA_CERTS naming that certificate (node reads it only at start-up), so both sides
 * verify TLS for real. `hooks.localhost` resolves to 127.0.0.1 inside the measuring process (bench
 * only: webhook hostnames need two labels). The database is embedded SQLite in a temp directory;
 * the events (and their deliveries, by fan-out) are written before each timed round. Rounds
 * alternate baseline and worker; the ratio is the median of the per-round ratios.
 *
 * Run alone: `node --import tsx bench/webhooks.ts`. Tunables: BENCH_WEBHOOK_CONCURRENCY (32),
 * BENCH_WEBHOOK_DELIVERIES (per round, 5000), BENCH_ROUNDS (3).
 */
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import dns from 'node:dns';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Agent, request } from 'undici';

const ROOT = resolve(import.meta.dirname, '..');
const CERT = join(ROOT, 'test/fixtures/tls/localhost.crt');
const KEY = join(ROOT, 'test/fixtures/tls/localhost.key');
const CONCURRENCY = Number(process.env.BENCH_WEBHOOK_CONCURRENCY ?? 32);
const PER_ROUND = Number(process.env.BENCH_WEBHOOK_DELIVERIES ?? 5000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const GOAL = 0.7;

export interface WebhookBenchResult {
  name: 'w';
  label: string;
  value: number;
  goal: number;
  verdict: 'PASS' | 'MISS';
  detail: {
    concurrency: number;
    deliveriesPerRound: number;
    /** Median of baseline CPU µs per request / worker CPU µs per delivery (measuring process only). */
    cpuRatio: number;
    rounds: { baselineRps: number; workerRps: number; ratio: number; baselineCpuUs: number; workerCpuUs: number }[];
  };
}

/** Runs the bench in a child process that trusts the test certificate; resolves with its result. */
export async function runWebhookBench(): Promise<WebhookBenchResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/webhooks.ts'), '--measure'], {
    cwd: ROOT,
    env: { ...process.env, NODE_EXTRA_CA_CERTS: CERT },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  const code = await new Promise<number | null>((r) => child.on('exit', r));
  const line = out.split('\n').find((l) => l.startsWith('RESULT '));
  if (code !== 0 || !line) throw new Error(`webhook bench exited ${code}: ${out}`);
  return JSON.parse(line.slice('RESULT '.length)) as WebhookBenchResult;
}

/** The receiver process: 200 to every request, kept-alive connections. */
function receive(): void {
  const server = createServer({ cert: readFileSync(CERT), key: readFileSync(KEY), keepAliveTimeout: 30_000 }, (req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
      res.end('ok');
    });
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${(server.address() as AddressInfo).port}\n`));
  process.on('SIGTERM', () => process.exit(0));
}

async function startReceiver(): Promise<{ port: number; stop(): void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/webhooks.ts'), '--receiver'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((res, rej) => {
    let buf = '';
    child.stdout!.setEncoding('utf8').on('data', (c: string) => {
      buf += c;
      const m = /PORT (\d+)/.exec(buf);
      if (m) res(Number(m[1]));
    });
    child.on('exit', (c) => rej(new Error(`receiver exited ${c}`)));
  });
  return { port, stop: () => child.kill('SIGTERM') };
}

function useLocalhostNames(): void {
  const original = dns.lookup;
  (dns as { lookup: unknown }).lookup = (hostname: string, options: any, callback: any) => {
    if (typeof options === 'function' || !hostname.endsWith('.localhost')) return (original as any)(hostname, options, callback);
    process.nextTick(() => (options?.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4)));
  };
}

/** Signed POSTs from CONCURRENCY loops over one keep-alive undici Agent: N requests, per second. */
async function baseline(url: string, secret: string, body: string, n: number): Promise<number> {
  const agent = new Agent({ keepAliveTimeout: 30_000 });
  let left = n;
  const started = performance.now();
  const loop = async () => {
    while (left-- > 0) {
      const t = Math.floor(Date.now() / 1000);
      const v1 = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${t}.${body}`).digest('hex');
      const res = await request(url, {
        dispatcher: agent,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'bench', 'service-event-id': 'x', 'service-signature': `t=${t},v1=${v1}` },
        body,
      });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`baseline got ${res.statusCode}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  const rps = n / ((performance.now() - started) / 1000);
  await agent.close();
  return rps;
}

async function measure(): Promise<void> {
  useLocalhostNames();
  const [{ loadConfig }, { createDeps }, accounts, domains, webhooks, { insertEvent }, { DeliveryWorker }] = await Promise.all([
    import('../src/config.js'),
    import('../src/deps.js'),
    import('../src/modules/accounts/service.js'),
    import('../src/modules/domains/service.js'),
    import('../src/modules/webhooks/service.js'),
    import('../src/modules/events/store.js'),
    import('../src/modules/webhooks/delivery-worker.js'),
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'was-bench-webhooks-'));
  const receiver = await startReceiver();
  const config = loadConfig({ DATABASE_URL: `sqlite:${join(dir, 'service.db')}`, DATA_DIR: dir, SECRET_KEY: 'bench-secret-key-0123456789abcdef0123', EGRESS_ALLOW_CIDRS: '127.0.0.1/32', LOG_LEVEL: 'warn' });
  const deps = await createDeps({ config, secretKey: config.secretKey!, epochPollMs: 0, net: { resolveTxt: async () => [], lookupAddresses: async () => ['127.0.0.1'] } });
  try {
    const user = await accounts.createUser(deps, { email: 'bench@bench.example', name: 'bench' });
    const ws = await accounts.createWorkspace(deps, { name: 'bench', plan: 'pro', ownerUserId: user.id });
    await domains.addDomain(deps, ws.id, 'hooks.localhost');
    await domains.verifyDomain(deps, ws.id, 'hooks.localhost', 'operator');
    const url = `https://hooks.localhost:${receiver.port}/hooks`;
    const { webhook, secret } = await webhooks.createWebhook(deps, ws.id, { url, eventTypes: ['job.completed'], enabled: true });
    const data = { job: { id: '0190a000-0000-7000-8000-000000000000', status: 'completed', toolSlug: 'image', costMillicents: 1200, version: 3 } };
    const sampleBody = JSON.stringify({ id: webhook.id, type: 'job.completed', workspaceId: ws.id, createdAt: new Date().toISOString(), data });
    const rounds: WebhookBenchResult['detail']['rounds'] = [];
    const viaWorker = async (n: number, onStart: () => void = () => {}): Promise<number> => {
      for (let i = 0; i < n; i += 200) {
        await deps.db.transaction().execute(async (trx) => {
          for (let j = i; j < Math.min(n, i + 200); j++) await insertEvent(trx, ws.id, 'job.completed', data, deps.clock.now());
        });
      }
      const worker = new DeliveryWorker(deps, { concurrency: CONCURRENCY });
      onStart();
      const started = performance.now();
      worker.start();
      while (worker.stats.succeeded + worker.stats.failed + worker.stats.retried < n) await new Promise((r) => setTimeout(r, 2));
      const rps = n / ((performance.now() - started) / 1000);
      await worker.stop();
      if (worker.stats.succeeded !== n) throw new Error(`worker: ${JSON.stringify(worker.stats)}`);
      return rps;
    };
    // Warm-up of both paths (JIT, TLS sessions, connection pools), not measured.
    await baseline(url, secret, sampleBody, PER_ROUND);
    await viaWorker(PER_ROUND);
    const cpuUsPer = (before: NodeJS.CpuUsage) => {
      const used = process.cpuUsage(before);
      return (used.user + used.system) / PER_ROUND;
    };
    for (let round = 0; round < ROUNDS; round++) {
      let cpu = process.cpuUsage();
      const baselineRps = await baseline(url, secret, sampleBody, PER_ROUND);
      const baselineCpuUs = cpuUsPer(cpu);
      // The events are written before the worker's clock starts; their CPU is not counted either.
      cpu = process.cpuUsage();
      const workerRps = await viaWorker(PER_ROUND, () => (cpu = process.cpuUsage()));
      const workerCpuUs = cpuUsPer(cpu);
      rounds.push({ baselineRps: Math.round(baselineRps), workerRps: Math.round(workerRps), ratio: workerRps / baselineRps, baselineCpuUs: Math.round(baselineCpuUs), workerCpuUs: Math.round(workerCpuUs) });
    }
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const value = median(rounds.map((r) => r.ratio));
    const cpuRatio = median(rounds.map((r) => r.baselineCpuUs / r.workerCpuUs));
    const result: WebhookBenchResult = {
      name: 'w',
      label: 'webhook deliveries/s, delivery worker / plain undici signed POSTs (HTTPS, keep-alive)',
      value,
      goal: GOAL,
      verdict: value >= GOAL ? 'PASS' : 'MISS',
      detail: { concurrency: CONCURRENCY, deliveriesPerRound: PER_ROUND, cpuRatio, rounds },
    };
    process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
  } finally {
    await deps.close();
    receiver.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function report(r: WebhookBenchResult): void {
  process.stdout.write(`(w) ${r.label}: ${r.value.toFixed(2)} (goal >= ${r.goal}) ${r.verdict}; CPU-time ratio ${r.detail.cpuRatio.toFixed(2)}\n`);
  for (const [i, x] of r.detail.rounds.entries()) {
    process.stdout.write(`    round ${i + 1}: baseline ${x.baselineRps}/s (${x.baselineCpuUs} µs CPU each), worker ${x.workerRps}/s (${x.workerCpuUs} µs CPU each), ratio ${x.ratio.toFixed(2)}\n`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.argv.includes('--receiver')) receive();
  else if (process.argv.includes('--measure')) {
    measure().catch((err: unknown) => {
      process.stderr.write(`webhook bench failed: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exit(1);
    });
  } else {
    runWebhookBench().then(report, (err: unknown) => {
      process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
      process.exit(1);
    });
  }
}

export { report as reportWebhookBench };
