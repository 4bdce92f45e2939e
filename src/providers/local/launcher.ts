/**
 * Starts the local engines' programs from a small helper process (launcher-child.ts) instead of
 * the service's own process. `spawn` forks the calling process, which copies its page tables and
 * blocks its event loop until the copy is done: for the service (about 180 MB) 5 to 10 ms a
 * program on a 2-CPU VM, stalling every request of an `all` process meanwhile; from the helper
 * (about 40 MB) about 1.5 ms, and not on the service's event loop.
 *
 * No byte of a program passes through the helper: the helper connects to a Unix socket of this
 * process (in a private 0700 directory), names the run by a random token, and gives the program
 * that connection as its stdin and stdout. The service writes the program's stdin into it once the
 * program runs, ends it (the program reads end of file), and reads the program's stdout from it
 * until the program closes it. The helper reports the program's pid, its exit (code, signal and
 * stderr tail) or that it could not be started. Killing stays here: the service signals the
 * program and its descendants by pid (process.ts), as when it was its own child.
 *
 * A started program looks like node's ChildProcess to process.ts (`StartedProgram`): `pid`,
 * `stdin`, `stdout` and `stderr` data, `error` and `close (code, signal)` once it exited and its
 * output ended. If the helper dies, every program it started is killed and closes with SIGKILL,
 * and the next run starts a new helper. Where the helper cannot be used (Windows, or it failed to
 * start) programs are spawned directly.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { killTree } from './process-tree.js';

const TOKEN_CHARS = 32;

/** What process.ts uses of a running program; node's ChildProcess (with piped stdio) has it too. */
export interface StartedProgram {
  readonly pid?: number | undefined;
  readonly stdin: NodeJS.WritableStream & { on(event: 'error', listener: (e: Error) => void): unknown };
  readonly stdout: { on(event: 'data', listener: (chunk: Buffer) => void): unknown };
  readonly stderr: { setEncoding(encoding: 'utf8'): { on(event: 'data', listener: (chunk: string) => void): unknown } };
  on(event: 'error', listener: (e: Error) => void): unknown;
  on(event: 'close', listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown;
  kill(signal: NodeJS.Signals): boolean;
}

export interface LaunchOptions {
  cwd: string;
  env: Record<string, string>;
  maxStderrBytes: number;
}

type HelperMessage =
  | { op: 'spawned'; token: string; pid: number }
  | { op: 'exit'; token: string; code: number | null; signal: NodeJS.Signals | null; stderr: string }
  | { op: 'error'; token: string; code: string; message: string };

/** A program started by the helper, as process.ts sees it. */
class RemoteProgram extends EventEmitter implements StartedProgram {
  pid: number | undefined;
  readonly stdin = new PassThrough();
  readonly stdout = new EventEmitter();
  private readonly stderrEvents = new EventEmitter();
  readonly stderr = { setEncoding: (_encoding: 'utf8') => this.stderrEvents };
  private socket: Socket | undefined;
  private outputEnded = false;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private pendingKill: NodeJS.Signals | undefined;
  private closed = false;
  private fed = false;

  constructor(private readonly forget: () => void) {
    super();
  }

  /** The program's connection, after its token (`rest`: output that came with the token). */
  attach(socket: Socket, rest: Buffer): void {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => this.stdout.emit('data', chunk));
    // A program that exits without reading all its stdin: the write fails, as on a pipe. When the
    // program and everything it started have closed the connection, it ends (and this side with it).
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.outputEnded = true;
      this.finish();
    });
    if (rest.length > 0) this.stdout.emit('data', rest);
    this.feed();
  }

  spawned(pid: number): void {
    this.pid = pid;
    if (this.pendingKill) this.kill(this.pendingKill);
    this.feed();
  }

  exited(code: number | null, signal: NodeJS.Signals | null, stderr: string): void {
    if (stderr) this.stderrEvents.emit('data', stderr);
    this.exit = { code, signal };
    this.finish();
  }

  failed(error: Error): void {
    this.emit('error', error);
    this.socket?.destroy();
    this.exit = { code: null, signal: null };
    this.outputEnded = true;
    this.finish();
  }

  /** The helper died: the program is killed here (it may still run) and closes as killed. */
  orphaned(): void {
    if (this.pid !== undefined) killTree(this.pid);
    this.socket?.destroy();
    this.exit ??= { code: null, signal: 'SIGKILL' };
    this.outputEnded = true;
    this.finish();
  }

  kill(signal: NodeJS.Signals): boolean {
    // Exited (its helper reaped it): its pid may already name another process.
    if (this.exit) return false;
    if (this.pid === undefined) {
      this.pendingKill = signal;
      return true;
    }
    try {
      process.kill(this.pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  /** The program's stdin flows once it runs and its connection is here, never earlier. */
  private feed(): void {
    if (this.fed || this.pid === undefined || !this.socket) return;
    this.fed = true;
    this.stdin.pipe(this.socket);
  }

  private finish(): void {
    if (this.closed || !this.exit || !this.outputEnded) return;
    this.closed = true;
    this.forget();
    this.emit('close', this.exit.code, this.exit.signal);
  }
}

export class Launcher {
  private helper: ChildProcess | undefined;
  private server: Server | undefined;
  private dir: string | undefined;
  private socketPath = '';
  private readonly programs = new Map<string, RemoteProgram>();
  /** Set when the helper could not be started: programs are spawned directly from then on. */
  private unavailable = process.platform === 'win32';

  /** Starts a program through the helper; undefined when the helper is not available. */
  start(path: string, args: string[], options: LaunchOptions): StartedProgram | undefined {
    const helper = this.ensureHelper();
    if (!helper) return undefined;
    const token = randomBytes(TOKEN_CHARS / 2).toString('hex');
    const program = new RemoteProgram(() => {
      this.programs.delete(token);
      if (this.programs.size === 0) channelOf(helper)?.unref();
    });
    this.programs.set(token, program);
    // While a program runs, the helper's reports keep this process alive (its exit may be the
    // last thing this process waits for); otherwise the channel does not.
    channelOf(helper)?.ref();
    helper.send({ op: 'spawn', token, path, args, cwd: options.cwd, env: options.env, maxStderrBytes: options.maxStderrBytes });
    return program;
  }

  /** The helper's pid while it runs (diagnostics and tests). */
  get helperPid(): number | undefined {
    return this.helper?.pid;
  }

  /** Starts the helper ahead of the first program (a worker that runs local engines). */
  prepare(): void {
    this.ensureHelper();
  }

  private ensureHelper(): ChildProcess | undefined {
    if (this.unavailable) return undefined;
    if (this.helper) return this.helper;
    try {
      if (!this.server) this.listen();
      const source = import.meta.url.endsWith('.ts');
      const script = fileURLToPath(new URL(source ? './launcher-child.ts' : './launcher-child.js', import.meta.url));
      // Not the service's stdout and stderr: a Node process clears O_NONBLOCK on the stdio it
      // inherits, which would turn every log write of the service into a blocking write(2) (a
      // log reader that stops reading would then stall the service, stop included). The helper
      // writes nothing to stdout; what it writes to stderr (a crash) is passed on to the
      // service's stderr.
      const helper = fork(script, [this.socketPath], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], execArgv: source ? ['--import', 'tsx'] : [], serialization: 'json' });
      helper.stderr?.on('data', (chunk: Buffer) => process.stderr.write(chunk));
      (helper.stderr as { unref?: () => void } | null)?.unref?.();
      helper.on('message', (m: HelperMessage) => this.onMessage(m));
      helper.on('error', () => {
        // It could not be started: programs are spawned directly from now on.
        this.unavailable = true;
        this.lost(helper);
      });
      helper.on('exit', () => this.lost(helper));
      // Neither the helper nor its channel keeps the service alive; a running program does.
      helper.unref();
      channelOf(helper)?.unref();
      this.helper = helper;
      return helper;
    } catch {
      this.unavailable = true;
      return undefined;
    }
  }

  private listen(): void {
    this.dir = mkdtempSync(join(tmpdir(), 'was-launch-'));
    this.socketPath = join(this.dir, 's');
    const server = createServer((socket) => this.accept(socket));
    server.listen(this.socketPath);
    server.unref();
    this.server = server;
    const dir = this.dir;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }

  /** A program's connection: its token first, then its output. */
  private accept(socket: Socket): void {
    let head: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
      if (head.length < TOKEN_CHARS) return;
      socket.off('data', onData);
      socket.off('end', onEnd);
      const program = this.programs.get(head.toString('latin1', 0, TOKEN_CHARS));
      if (!program) {
        socket.destroy();
        return;
      }
      program.attach(socket, head.subarray(TOKEN_CHARS));
    };
    const onEnd = () => socket.destroy();
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('error', () => socket.destroy());
  }

  private onMessage(m: HelperMessage): void {
    const program = this.programs.get(m.token);
    if (!program) return;
    if (m.op === 'spawned') program.spawned(m.pid);
    else if (m.op === 'exit') program.exited(m.code, m.signal, m.stderr);
    else program.failed(Object.assign(new Error(m.message), { code: m.code }));
  }

  private lost(helper: ChildProcess): void {
    if (this.helper !== helper) return;
    this.helper = undefined;
    for (const program of [...this.programs.values()]) program.orphaned();
  }
}

function channelOf(helper: ChildProcess): { ref(): void; unref(): void } | undefined {
  return helper.channel as { ref(): void; unref(): void } | undefined;
}

/** The process's launcher. */
export const launcher = new Launcher();
