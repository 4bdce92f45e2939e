/**
 * Request log lines of the BUILT server (`node dist/main.js serve`, default LOG_LEVEL=info) are
 * written through an asynchronous destination (src/lib/logging.ts). Nothing may be lost for it:
 * a burst of requests, then at once an orderly stop (SIGTERM) or a fatal error (an exception
 * nothing catches), and every answered request has exactly one `request completed` line with its
 * request id, route, status and duration, and no line carries the key that was sent.
 * `npm test` builds first; run alone, `npm run build` must have run (otherwise skipped).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DIST_MAIN, onLogLines } from '../support/processes.js';
import { needsDist } from '../support/requirements.js';

type LogLine = Record<string, unknown>;

const BURST = 1500;
const CONCURRENCY = 50;
/** A well-formed key no server knows: every burst request is answered 401 (no database write). */
const KEY = `wask_${'Q'.repeat(43)}`;

interface Server {
  base: string;
  pid: number;
  lines: LogLine[];
  /** The server's stdout (pause it to stop reading the log). */
  stdout: NodeJS.ReadableStream;
  /** Resolves once the process exited and its stdout was read to the end. */
  closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal: NodeJS.Signals): void;
}

/** Starts the built server; `preload` is a module run before it (node --import). */
async function start(dir: string, preload?: string): Promise<Server> {
  const child = spawn(process.execPath, [...(preload ? ['--import', preload] : []), DIST_MAIN, 'serve'], {
    cwd: resolve('.'),
    // LOG_LEVEL is left at its default (info): the configuration users run.
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', DATA_DIR: dir, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: LogLine[] = [];
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => child.on('close', (code, signal) => res({ code, signal })));
  const started = new Promise<LogLine>((res, rej) => {
    onLogLines<LogLine>(child.stdout!, (line) => {
      lines.push(line);
      if (line.msg === 'service started') res(line);
    });
    void closed.then(({ code, signal }) => rej(new Error(`server exited (${code ?? signal}) before it started; stderr: ${stderr}`)));
  });
  const line = await started;
  return { base: `http://127.0.0.1:${String(line.port)}`, pid: child.pid!, stdout: child.stdout!, lines, closed, kill: (signal) => child.kill(signal) };
}

/** BURST requests over CONCURRENCY keep-alive connections; the request ids of those answered. */
async function burst(base: string, afterAnswers?: { count: number; then: () => void }): Promise<Map<string, number>> {
  const answered = new Map<string, number>();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < BURST; i = next++) {
      try {
        const res = await fetch(`${base}/v1/usage?n=${i}`, { headers: { authorization: `Bearer ${KEY}` } });
        await res.arrayBuffer();
        answered.set(res.headers.get('x-request-id') ?? `missing-${i}`, res.status);
        if (afterAnswers && answered.size === afterAnswers.count) afterAnswers.then();
      } catch {
        // The server closed the connection while stopping: this request got no answer.
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return answered;
}

/** Every answered request has exactly one complete request line; no line carries the key. */
function checkLines(lines: LogLine[], answered: Map<string, number>): void {
  const requestLines = lines.filter((l) => l.msg === 'request completed' && String(l.url).startsWith('/v1/usage?n='));
  const byId = new Map<string, LogLine[]>();
  for (const l of requestLines) byId.set(String(l.requestId), [...(byId.get(String(l.requestId)) ?? []), l]);
  const missing = [...answered.keys()].filter((id) => !byId.has(id));
  assert.deepEqual(missing.slice(0, 5), [], `${missing.length} of ${answered.size} answered requests have no log line`);
  for (const [id, status] of answered) {
    const [line, ...more] = byId.get(id)!;
    assert.equal(more.length, 0, `one line per request (${id})`);
    assert.equal(line!.statusCode, status);
    assert.equal(line!.method, 'GET');
    assert.equal(line!.route, '/v1/usage');
    assert.equal(typeof line!.responseTimeMs, 'number');
    assert.equal(line!.level, 30);
  }
  // Lines of requests that got no answer (cut off by the stop) may exist; none is logged twice.
  assert.equal(requestLines.length, byId.size, 'no request is logged twice');
  assert.ok(!JSON.stringify(lines).includes(KEY.slice(5, 25)), 'the key never reaches the log');
}

describe('request log lines survive a stop right after a burst (built server, LOG_LEVEL=info)', { skip: needsDist() }, () => {
  test('SIGTERM during a burst: every answered request has its line, then "stopped", exit 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'was-logflush-'));
    try {
      const server = await start(dir);
      // Stop once two thirds are answered: the rest are in flight, answered 503 or cut off.
      const answered = await burst(server.base, { count: Math.floor((BURST * 2) / 3), then: () => server.kill('SIGTERM') });
      const { code } = await server.closed;
      assert.equal(code, 0);
      assert.ok(answered.size >= Math.floor((BURST * 2) / 3), `${answered.size} answered`);
      checkLines(server.lines, answered);
      assert.equal(server.lines.at(-1)?.msg, 'stopped', 'the last line is the stop');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a log reader that stops reading holds up no request; the lines arrive whole once it reads again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'was-logflush-'));
    try {
      const server = await start(dir);
      // Nothing reads the pipe: its 64 KiB fill up after a few hundred lines, the rest of the
      // burst's lines (about 400 KiB) wait in the service's memory, and every request is still
      // answered. (A write(2) blocking the event loop would stall the burst until the test times out.)
      server.stdout.pause();
      const answered = await burst(server.base);
      assert.equal(answered.size, BURST);
      assert.ok([...answered.values()].every((status) => status === 401));
      const before = server.lines.length;
      server.stdout.resume();
      server.kill('SIGTERM');
      const { code } = await server.closed;
      assert.equal(code, 0);
      assert.ok(server.lines.length > before + BURST / 2, `the held lines arrived (${server.lines.length - before} after resuming)`);
      checkLines(server.lines, answered);
      assert.ok(!server.lines.some((l) => l.msg === 'log lines dropped: stdout was not read fast enough'), 'nothing was dropped');
      assert.equal(server.lines.at(-1)?.msg, 'stopped');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a fatal error right after a burst: every line is written, then the fatal line, exit 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'was-logflush-'));
    try {
      // The fatal error: an exception nothing catches, thrown on SIGUSR2 (a module loaded first).
      const preload = join(dir, 'fatal-on-usr2.mjs');
      writeFileSync(preload, "process.on('SIGUSR2', () => { throw new Error('fatal test error'); });\n");
      const server = await start(dir, preload);
      const answered = await burst(server.base);
      assert.equal(answered.size, BURST);
      server.kill('SIGUSR2');
      const { code } = await server.closed;
      assert.equal(code, 1);
      checkLines(server.lines, answered);
      const fatalAt = server.lines.findIndex((l) => l.level === 60);
      assert.ok(fatalAt >= 0, `a fatal line; last lines: ${JSON.stringify(server.lines.slice(-3))}`);
      const fatal = server.lines[fatalAt]!;
      const lastRequestLine = server.lines.findLastIndex((l) => l.msg === 'request completed');
      assert.ok(lastRequestLine < fatalAt, 'the request lines come before the fatal line');
      assert.equal(fatal.level, 60);
      assert.match(String((fatal.err as { message?: string } | undefined)?.message), /fatal test error/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
