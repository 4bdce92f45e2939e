/**
 * Restart-to-ready (issue 19 part 4): how long `npm start` on an unchanged checkout takes until
 * `GET /readyz` answers 200, and how long `npm run cli -- <read>` takes to print its answer.
 * Goal: both within 3 s on the project machine. Not a test: the number depends on the machine
 * and its load, so it is measured here and reported, never asserted by a timer in `npm test`.
 *
 *   node --import tsx bench/restart.ts          (RESTART_RUNS, default 5)
 *
 * Each run starts the service exactly as an operator does (`npm start`, so the build-if-stale
 * check runs first) on the same DATA_DIR (embedded SQLite: the first run creates and migrates
 * the database, the later ones are restarts), polls /readyz every 20 ms, then stops it with
 * SIGTERM and waits for the exit (the server lock is released) before the next run. The CLI runs
 * `npm run cli -- users list` against the same database. It also times the bare `node dist/main.js`
 * forms, to tell npm's own overhead from the service's start-up. Prints each run and the medians;
 * writes .bench/restart.json. The checkout must be built (`npm run build`) for the times to mean
 * "unchanged checkout"; a stale one is built by the first run (reported as such).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { cpuTimes, freePort, sleep } from './processes.js';

const ROOT = resolve(import.meta.dirname, '..');
const RUNS = Math.max(1, Number(process.env.RESTART_RUNS ?? 5));
const GOAL_MS = 3000;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

/** CPU seconds (user + system) of the last direct `node` start at its ready moment: a measure the machine's load barely moves. */
const cpuAtReady: number[] = [];
/** CPU seconds of the last direct CLI runs (GNU time), for the same reason. */
const cliCpu: number[] = [];
const GNU_TIME = '/usr/bin/time';

async function startToReady(command: string, args: string[], env: Record<string, string>, port: number): Promise<number> {
  const started = performance.now();
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${command} ${args.join(' ')} exited ${child.exitCode}: ${stderr}`);
      try {
        if ((await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200) {
          const elapsed = performance.now() - started;
          if (command === process.execPath && child.pid) {
            const cpu = cpuTimes(child.pid);
            cpuAtReady.push(cpu.user + cpu.system);
          }
          return elapsed;
        }
      } catch {
        // not listening yet
      }
      if (performance.now() - started > 120_000) throw new Error(`not ready within 120 s: ${stderr}`);
      await sleep(20);
    }
  } finally {
    // The whole process group: npm, its shell and the node process of the service.
    if (child.exitCode === null && child.pid) process.kill(-child.pid, 'SIGTERM');
    await exited;
    await sleep(100);
  }
}

async function runToExit(command: string, args: string[], env: Record<string, string>): Promise<number> {
  const started = performance.now();
  const timed = command === process.execPath && existsSync(GNU_TIME);
  const child = timed
    ? spawn(GNU_TIME, ['-f', 'cpu %U %S', command, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] })
    : spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((res) => child.once('exit', (c) => res(c)));
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr}`);
  const cpu = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(stderr);
  if (timed && cpu && args[0] === 'dist/main.js') cliCpu.push(Number(cpu[1]) + Number(cpu[2]));
  return performance.now() - started;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'was-restart-'));
  const env = { DATA_DIR: dataDir, LOG_LEVEL: 'warn', ROLE: 'all', SECRET_KEY: 'restart-bench-secret-key-0123456789abcdef' };
  const results: Record<string, number[]> = { 'node -e "" (baseline)': [], 'npm start': [], 'node dist/main.js serve': [], 'npm run cli -- users list': [], 'node dist/main.js users list': [] };
  try {
    for (let i = 0; i < RUNS; i++) {
      // How slow plain node starts on this machine right now: the yardstick for the load.
      results['node -e "" (baseline)']!.push(await runToExit(process.execPath, ['-e', ''], {}));
      const port = await freePort();
      results['npm start']!.push(await startToReady('npm', ['start', '--silent'], { ...env, PORT: String(port) }, port));
      const port2 = await freePort();
      results['node dist/main.js serve']!.push(await startToReady(process.execPath, ['dist/main.js', 'serve'], { ...env, PORT: String(port2) }, port2));
      results['npm run cli -- users list']!.push(await runToExit('npm', ['run', '--silent', 'cli', '--', 'users', 'list'], env));
      results['node dist/main.js users list']!.push(await runToExit(process.execPath, ['dist/main.js', 'users', 'list'], env));
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  const rows = Object.entries(results).map(([name, ms]) => ({ name, runs: ms.map((m) => Math.round(m)), medianMs: Math.round(median(ms)) }));
  const baseline = rows[0]!.medianMs;
  for (const r of rows) {
    const goal = r.name.startsWith('npm') ? `  goal <= ${GOAL_MS} ms: ${r.medianMs <= GOAL_MS ? 'PASS' : 'MISS'}` : '';
    process.stdout.write(`${r.name.padEnd(30)} median ${String(r.medianMs).padStart(5)} ms (${(r.medianMs / baseline).toFixed(1)}x node -e)  runs ${r.runs.join(', ')}${goal}\n`);
  }
  const cpu = { serveAtReadyS: cpuAtReady.length ? median(cpuAtReady) : null, cliS: cliCpu.length ? median(cliCpu) : null };
  const load = loadavg().map((l) => l.toFixed(1)).join(' ');
  process.stdout.write(`CPU (median): node dist/main.js serve until ready ${cpu.serveAtReadyS?.toFixed(2)} s; node dist/main.js users list ${cpu.cliS?.toFixed(2)} s; ${cpus().length} CPUs, load average ${load}\n`);
  mkdirSync(join(ROOT, '.bench'), { recursive: true });
  writeFileSync(join(ROOT, '.bench/restart.json'), `${JSON.stringify({ at: new Date().toISOString(), node: process.version, load, cpu, rows }, null, 2)}\n`);
}

await main();
