/** Child processes for the bench: spawn on loopback, wait for readiness, stop, read CPU time. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { constants } from 'node:os';

export interface Child {
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => res(port));
    });
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Children still running. They are sent SIGTERM when the bench exits, however it exits
 * (Ctrl-C, an error, its output closed under `| head`): services left running from an
 * interrupted bench would share the CPUs with every later measurement.
 */
const running = new Set<ChildProcess>();
let exitHooked = false;

function stopChildrenOnExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', () => {
    for (const child of running) child.kill('SIGTERM');
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => process.exit(128 + constants.signals[signal]));
}

/**
 * Where a child's stdout (the service's log lines) goes: `pipe` (default), a pipe drained by a
 * `cat` process of its own, as a supervisor, a container runtime or a log shipper reads a
 * service's log; `null`, /dev/null (nothing reads: the cheapest destination, which no deployment
 * that keeps its log has). BENCH_STDOUT selects.
 */
const STDOUT = process.env.BENCH_STDOUT === 'null' ? 'null' : 'pipe';

export function spawnChild(cwd: string, args: string[], env: Record<string, string>): Child {
  const child = spawn(process.execPath, args, {
    cwd,
    // The bench is a test rig: its live keys run simulated work (docs/decisions.md "Test mode").
    env: { PATH: process.env.PATH ?? '', SIMULATE_LIVE: 'true', ...env },
    stdio: ['ignore', STDOUT === 'pipe' ? 'pipe' : 'ignore', 'pipe'],
  });
  stopChildrenOnExit();
  running.add(child);
  child.on('exit', () => running.delete(child));
  if (STDOUT === 'pipe') {
    // The reader gets the pipe itself; this process never reads it. It ends when the child does.
    const reader = spawn('cat', [], { stdio: [child.stdout!, 'ignore', 'ignore'] });
    running.add(reader);
    reader.on('exit', () => running.delete(reader));
    child.stdout!.destroy();
  }
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const exited = new Promise<void>((res) => child.on('exit', () => res()));
  child.on('exit', (code, signal) => {
    if (code !== 0 && code !== null && signal === null) process.stderr.write(`child ${args.join(' ')} exited ${code}:\n${stderr}\n`);
  });
  return {
    process: child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export async function waitReady(url: string, child: Child, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.process.exitCode !== null) throw new Error(`server exited with ${child.process.exitCode} before ${url} answered`);
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${url} not ready within ${timeoutMs} ms`);
}

const CLOCK_TICKS_PER_S = 100;

/**
 * User and system CPU seconds a process has used so far, and `children`: those of the children it
 * has reaped (Linux /proc; NaN elsewhere).
 */
export function cpuTimes(pid: number): { user: number; system: number; children: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = (i: number) => Number(fields[i]) / CLOCK_TICKS_PER_S;
    return { user: ticks(11), system: ticks(12), children: ticks(13) + ticks(14) };
  } catch {
    return { user: NaN, system: NaN, children: NaN };
  }
}
