/**
 * `node --import tsx bench/inject-profile.ts`: CPU microseconds per request of the service's
 * hot paths through `app.inject` (no sockets, no HTTP parsing), against a bare Fastify route.
 * This isolates the JS cost of hooks and handlers from the kernel's loopback cost, so it is
 * steady on a busy machine; use it to find which part of a request is slow. Run with
 * `--cpu-prof` for a V8 profile. `app.inject` keeps about 10 KB per request alive (a bare
 * Fastify app too), so garbage collection weighs more here than over sockets: compare the cases
 * with each other, not with bench/run.ts.
 */
import Fastify from 'fastify';
import { createTestContext, disposeTestContext } from '../test/support/harness.js';
import { seedTenant } from '../test/support/seed.js';
import { updateWorkspaceSettings } from '../src/modules/accounts/service.js';

const N = Number(process.env.N ?? 20_000);

async function measure(label: string, run: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 2000; i++) await run(); // warm-up (JIT, caches)
  const t0 = process.cpuUsage();
  for (let i = 0; i < N; i++) await run();
  const d = process.cpuUsage(t0);
  const us = (d.user + d.system) / N;
  process.stdout.write(`${label.padEnd(44)} ${us.toFixed(1).padStart(7)} µs/request\n`);
  return us;
}

const bare = Fastify({ logger: false });
bare.get('/bare', async () => ({ success: true, code: 'BARE', message: 'ok', data: { status: 'ok' } }));
await bare.ready();

const ctx = await createTestContext('sqlite');
const open = await seedTenant(ctx.deps, { credits: 1000 });
await updateWorkspaceSettings(ctx.deps, open.workspace.id, { limits: { pointsPerMinute: 1_000_000_000, pointsPerMonth: 1_000_000_000_000 } });

const limited = await seedTenant(ctx.deps, { credits: 1000, plan: 'free' });
const h = (secret: string, ws: string) => ({ authorization: `Bearer ${secret}`, 'x-service-workspace': ws });
for (let i = 0; i < 300; i++) await ctx.app.inject({ method: 'GET', url: '/v1/usage', headers: h(limited.secret, limited.workspace.id) });

const a = await measure('(a) bare Fastify route', () => bare.inject({ method: 'GET', url: '/bare' }));
const results: [string, number, number][] = [];
const cases: [string, Record<string, string>, number][] = [
  ['(h) GET /healthz (hooks only)', {}, 200],
  ['(b) GET /v1/usage, valid key', h(open.secret, open.workspace.id), 200],
  ['(c) GET /v1/usage, unknown key (401)', h(`wask_${'A'.repeat(43)}`, open.workspace.id), 401],
  ['(d) GET /v1/usage, over minute limit (429)', h(limited.secret, limited.workspace.id), 429],
];
for (const [label, headers, status] of cases) {
  if (process.env.ONLY && !process.env.ONLY.includes(label[1]!)) continue;
  const url = label.startsWith('(h)') ? '/healthz' : '/v1/usage';
  const first = await ctx.app.inject({ method: 'GET', url, headers });
  if (first.statusCode !== status) throw new Error(`${label}: expected ${status}, got ${first.statusCode} ${first.body}`);
  const us = await measure(label, () => ctx.app.inject({ method: 'GET', url, headers }));
  results.push([label, us, a / us]);
}
process.stdout.write('\nCPU ratio to (a): ' + results.map(([l, , r]) => `${l.slice(0, 3)} ${r.toFixed(2)}`).join('  ') + '\n');
await disposeTestContext(ctx);
await bare.close();
