/**
 * (q) The operator CLI's answer times (issue 38): `was --help`, `was keys create --help` and a
 * read, `was users list`, each run as a fresh process (`node dist/main.js …`, as `was` runs),
 * median of BENCH_CLI_RUNS (10) after one warm-up, against `node -e 0` (the floor: starting node
 * itself). Goals: help ≤ 0.25 s, a read ≤ 0.6 s. The read runs on a fresh SQLite data directory
 * after `quickstart` (so it reads real rows and the migrations are already applied).
 *
 * Run alone with `BENCH_ONLY=q npm run bench`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const MAIN = resolve(import.meta.dirname, '..', 'dist/main.js');
const RUNS = Number(process.env.BENCH_CLI_RUNS ?? 10);

export interface CliBenchCase {
  name: string;
  medianS: number;
  goalS: number | null;
  verdict: 'PASS' | 'MISS' | null;
}

function timeOnce(args: string[], env: NodeJS.ProcessEnv): number {
  const started = process.hrtime.bigint();
  execFileSync(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  return Number(process.hrtime.bigint() - started) / 1e9;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function runCliBench(): CliBenchCase[] {
  const dataDir = mkdtempSync(join(tmpdir(), 'was-bench-cli-'));
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  try {
    execFileSync(process.execPath, [MAIN, 'quickstart'], { env, stdio: 'ignore' });
    const cases: { name: string; args: string[]; goalS: number | null }[] = [
      { name: 'node -e 0 (floor)', args: ['-e', '0'], goalS: null },
      { name: 'was --help', args: [MAIN, '--help'], goalS: 0.25 },
      { name: 'was keys create --help', args: [MAIN, 'keys', 'create', '--help'], goalS: 0.25 },
      { name: 'was users list', args: [MAIN, 'users', 'list'], goalS: 0.6 },
    ];
    return cases.map(({ name, args, goalS }) => {
      timeOnce(args, env);
      const medianS = median(Array.from({ length: RUNS }, () => timeOnce(args, env)));
      return { name, medianS, goalS, verdict: goalS === null ? null : medianS <= goalS ? 'PASS' : 'MISS' };
    });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export function reportCliBench(cases: CliBenchCase[]): void {
  for (const c of cases) {
    const goal = c.goalS === null ? '' : `  goal <= ${c.goalS.toFixed(2)} s  ${c.verdict}`;
    console.log(`  ${c.name.padEnd(26)} ${c.medianS.toFixed(3)} s (median of ${RUNS})${goal}`);
  }
}
