/**
 * Runs an outside program for a local engine: an argument array (never a shell), optional bytes
 * on stdin, a time limit, a bound on what it may write to stdout and on the size of the files it
 * writes into the working directory, killed (SIGKILL, with every process it started) on abort or
 * when a bound is passed. Every run gets a fresh temporary directory that is removed whatever
 * happens.
 *
 * The program stays in the service's session and process group. It used to be started
 * `detached` (a session of its own, so that one kill of its process group reached anything it
 * started), but on Linux a new session is a new scheduling autogroup, whose CPU share starts near
 * zero and ramps up over tens of milliseconds: on a busy 2-core machine espeak-ng's 70 ms run took
 * 30 to 40 % longer that way (medians of 40 interleaved runs). The kill now finds the program's
 * descendants itself (/proc) before killing them and it. Staying in the group also means a signal
 * sent to the service's whole process group (Ctrl-C in a terminal, a supervisor's group kill)
 * reaches the program: such a death, by a signal this module did not send, rejects with
 * WorkerShutdown, and the attempt is left to recovery as at any shutdown instead of failing.
 *
 * The program is started by the launcher's helper process (launcher.ts), not by this process: a
 * fork of the service (about 180 MB) cost 5 to 10 ms of its event loop a program, and the
 * copy-on-write faults after it more CPU still. The helper is forked without `detached`, so the
 * programs it starts are in this session and process group as described above; their stdin and
 * stdout are a socket to this process, and this module kills them by pid as before. Where the
 * helper cannot be used, the program is spawned here directly.
 *
 * Invariant: when `runProgram` settles, the child has exited and its directory is gone; no
 * orphaned process and no temporary file outlive a run.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkerShutdown } from '../types.js';
import { launcher, type StartedProgram } from './launcher.js';
import { descendantsOf, signalQuietly } from './process-tree.js';

export interface ProgramRun {
  path: string;
  args: string[];
  stdin?: Buffer | string;
  /** Whole run deadline. */
  timeoutMs: number;
  /** Most bytes kept from stdout (more kills the program). */
  maxStdoutBytes?: number;
  /** Most bytes of stderr kept for diagnostics (more is dropped, not fatal). */
  maxStderrBytes?: number;
  /** A file in the working directory whose size is watched: past `maxFileBytes` the program is killed. */
  watchFile?: string;
  maxFileBytes?: number;
  signal?: AbortSignal;
}

export interface ProgramResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

export type ProgramFailureKind = 'timeout' | 'too-large' | 'exit' | 'spawn';

export class ProgramFailure extends Error {
  constructor(
    readonly kind: ProgramFailureKind,
    message: string,
    readonly stderr = '',
  ) {
    super(message);
    this.name = 'ProgramFailure';
  }
}

const WATCH_INTERVAL_MS = 100;

/**
 * Gives `work` a fresh temporary directory and removes it afterwards, whatever `work` does.
 */
export async function withWorkDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'was-engine-'));
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Runs the program in `cwd`; resolves when it exited with code 0. Fails with ProgramFailure
 * (timeout, too-large, exit with its stderr tail, spawn), or with the signal's reason on abort,
 * always after the child is gone.
 */
export function runProgram(run: ProgramRun, cwd: string): Promise<ProgramResult> {
  return new Promise((resolve, reject) => {
    if (run.signal?.aborted) {
      reject(run.signal.reason);
      return;
    }
    const maxStdout = run.maxStdoutBytes ?? 64 * 1024 * 1024;
    const maxStderr = run.maxStderrBytes ?? 64 * 1024;
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' };
    // Started by the launcher's helper process (no fork of this process), or directly where it
    // cannot be used.
    const child: StartedProgram =
      launcher.start(run.path, run.args, { cwd, env, maxStderrBytes: maxStderr }) ?? spawn(run.path, run.args, { cwd, stdio: ['pipe', 'pipe', 'pipe'], env });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let failure: unknown;
    let timer: NodeJS.Timeout | undefined;
    let watcher: NodeJS.Timeout | undefined;
    const kill = (why: unknown) => {
      failure ??= why;
      // Its descendants first (a program that started children of its own leaves none behind),
      // while they are still its descendants: once it is gone they belong to init.
      if (child.pid !== undefined) for (const pid of descendantsOf(child.pid)) signalQuietly(pid);
      child.kill('SIGKILL');
    };
    const onAbort = () => kill(run.signal!.reason);
    run.signal?.addEventListener('abort', onAbort, { once: true });
    timer = setTimeout(() => kill(new ProgramFailure('timeout', `the program ran longer than ${run.timeoutMs} ms`)), run.timeoutMs);
    if (run.watchFile && run.maxFileBytes !== undefined) {
      const file = join(cwd, run.watchFile);
      const limit = run.maxFileBytes;
      watcher = setInterval(() => {
        stat(file).then(
          (s) => {
            if (s.size > limit) kill(new ProgramFailure('too-large', `the output passed ${limit} bytes`));
          },
          () => undefined,
        );
      }, WATCH_INTERVAL_MS);
    }
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > maxStdout) kill(new ProgramFailure('too-large', `the program wrote more than ${maxStdout} bytes`));
      else out.push(chunk);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      err = (err + chunk).slice(-maxStderr);
    });
    child.stdin.on('error', () => undefined);
    child.on('error', (e) => kill(new ProgramFailure('spawn', `cannot run ${run.path}: ${(e as NodeJS.ErrnoException).code ?? e.message}`)));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (watcher) clearInterval(watcher);
      run.signal?.removeEventListener('abort', onAbort);
      if (failure !== undefined) {
        if (failure instanceof ProgramFailure && failure.kind !== 'spawn') reject(new ProgramFailure(failure.kind, failure.message, err));
        else reject(failure);
        return;
      }
      // Stopped from outside with the service (its process group signalled): not the program's
      // failure; the attempt ends as at a shutdown and the job is recovered.
      if (signal === 'SIGINT' || signal === 'SIGTERM' || signal === 'SIGHUP') {
        reject(new WorkerShutdown());
        return;
      }
      if (code !== 0) {
        reject(new ProgramFailure('exit', `the program exited with code ${code}`, err));
        return;
      }
      resolve({ code, stdout: Buffer.concat(out), stderr: err });
    });
    if (run.stdin !== undefined) child.stdin.end(run.stdin);
    else child.stdin.end();
  });
}
