/**
 * The launcher's helper process (launcher.ts): a small Node process, forked by the service, that
 * starts the local engines' programs so that the service itself never forks. A fork copies the
 * page tables of the process that calls it and blocks its event loop meanwhile: from the service
 * (about 180 MB) that took 5 to 10 ms a program on a 2-CPU VM, from this process about 1.5 ms.
 *
 * Protocol (IPC messages with the service, JSON):
 *   in:  {op: 'spawn', token, path, args, cwd, env}
 *        The helper connects to the service's Unix socket (argv[2]), writes the 32-character
 *        token, and once that is flushed starts the program with the socket as its stdin and
 *        stdout (the service reads and writes the program's bytes directly; nothing is relayed
 *        here) and a pipe as its stderr, then closes its own copy of the socket.
 *   out: {op: 'spawned', token, pid}                  the program runs;
 *        {op: 'exit', token, code, signal, stderr}    it exited (stderr: its last bytes, bounded);
 *        {op: 'error', token, code, message}          it could not be started.
 * Killing is the service's: it signals the program and its descendants by pid.
 *
 * It ignores SIGINT, SIGTERM and SIGHUP (a signal to the service's process group reaches the
 * programs themselves, and their exits must still be reported) and exits when the service does
 * (its IPC channel closes), killing the programs still running and removing the socket's
 * directory: a service killed outright leaves neither behind.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { killTree } from './process-tree.js';

interface SpawnRequest {
  op: 'spawn';
  token: string;
  path: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  maxStderrBytes: number;
}

const socketPath = process.argv[2] ?? '';
/** The programs running now, by pid. */
const running = new Set<number>();
const send = (message: object) => {
  if (process.connected) process.send?.(message);
};

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => undefined);
// The service is gone (stopped, or killed without a chance to stop its programs): nothing would
// read their output or settle their jobs, so they go with it, and whatever they started.
// Its socket's private directory goes too: a service killed outright could not remove it.
process.on('disconnect', () => {
  for (const pid of running) killTree(pid);
  if (socketPath) rmSync(dirname(socketPath), { recursive: true, force: true });
  process.exit(0);
});
process.on('message', (m: SpawnRequest) => {
  if (m?.op === 'spawn') start(m);
});

function start(m: SpawnRequest): void {
  const socket = connect(socketPath);
  socket.on('error', (e) => {
    send({ op: 'error', token: m.token, code: (e as NodeJS.ErrnoException).code ?? 'ECONNREFUSED', message: e.message });
    socket.destroy();
  });
  // Nothing arrives before 'spawned' (the service writes the program's stdin only then, after this
  // process closed its copy of the socket), so this process never reads what is meant for it.
  socket.once('connect', () =>
    socket.write(m.token, (err) => {
      if (err) {
        send({ op: 'error', token: m.token, code: (err as NodeJS.ErrnoException).code ?? 'EPIPE', message: err.message });
        socket.destroy();
      } else launch(m, socket);
    }),
  );
}

function launch(m: SpawnRequest, socket: ReturnType<typeof connect>): void {
  let child;
  try {
    child = spawn(m.path, m.args, { cwd: m.cwd, env: m.env, stdio: [socket, socket, 'pipe'] });
  } catch (e) {
    socket.destroy();
    send({ op: 'error', token: m.token, code: (e as NodeJS.ErrnoException).code ?? 'EINVAL', message: (e as Error).message });
    return;
  }
  // The program has its own copy of the socket; this one is closed so that the service sees the
  // end of the program's output when the program (and whatever it started) closes it.
  socket.destroy();
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-m.maxStderrBytes);
  });
  let failed = false;
  child.on('error', (e) => {
    failed = true;
    send({ op: 'error', token: m.token, code: (e as NodeJS.ErrnoException).code ?? 'EINVAL', message: e.message });
  });
  const pid = child.pid;
  // 'close': the exit and the end of stderr, so the tail is complete.
  child.on('close', (code, signal) => {
    if (pid !== undefined) running.delete(pid);
    if (!failed) send({ op: 'exit', token: m.token, code, signal, stderr });
  });
  if (pid !== undefined) {
    running.add(pid);
    send({ op: 'spawned', token: m.token, pid });
  }
}
