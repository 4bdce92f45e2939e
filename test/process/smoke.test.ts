/**
 * Processes: a smoke run of the BUILT server exactly as
 * `npm start` runs it (`node dist/main.js serve`) over real sockets: readiness, the admin API,
 * public calls, the CLI beside a live server, the lock against a second server, graceful
 * shutdown with a request in flight, and ROLE=worker without a listener.
 * `npm test` builds first; run alone, `npm run build` must have run (otherwise the smoke part is
 * skipped with a message).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { acquireServerLock, LOCK_HELD_EXIT_CODE, lockHolderPid } from '../../src/process-lock.js';
import { SCOPES } from '../../src/modules/auth/scopes.js';
import { OPERATION_IDS } from '../../src/operations/ids.js';
import { onLogLines } from '../support/processes.js';
import { waitUntil } from '../support/wait.js';
import { needsDist } from '../support/requirements.js';
import { freePort } from '../support/free-port.js';

const DIST_MAIN = resolve('dist/main.js');
const ADMIN_TOKEN = 'smoke-admin-token-0123456789';

function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

interface Proc {
  child: ChildProcess;
  lines: Record<string, unknown>[];
  stderr: string[];
  exit: Promise<number | null>;
  /** Resolves with the first log line satisfying `match`. */
  waitFor(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
}

const started: ChildProcess[] = [];

function startProcess(args: string[], env: Record<string, string>): Proc {
  const child = spawn(process.execPath, [DIST_MAIN, ...args], {
    cwd: resolve('.'),
    // No SIMULATE_LIVE (support/harness.ts says why).
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  const lines: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  const waiters: { match: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] = [];
  onLogLines(child.stdout!, (line) => {
    lines.push(line);
    for (const w of [...waiters]) {
      if (w.match(line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
  const exit = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  return {
    child,
    lines,
    stderr,
    exit,
    // A state wait (resolves at the line): a start on a loaded 2-core machine can take tens of seconds.
    waitFor(match, timeoutMs = 120_000) {
      const seen = lines.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((res, rej) => {
        const timer = setTimeout(
          () => rej(new Error(`timed out waiting for a log line; stdout: ${JSON.stringify(lines)}; stderr: ${stderr.join('')}`)),
          timeoutMs,
        );
        const waiter = {
          match,
          resolve: (l: Record<string, unknown>) => {
            clearTimeout(timer);
            res(l);
          },
        };
        waiters.push(waiter);
        void exit.then((code) => {
          if (waiters.includes(waiter)) {
            clearTimeout(timer);
            rej(new Error(`process exited (${code}) before the log line; stdout: ${JSON.stringify(lines)}; stderr: ${stderr.join('')}`));
          }
        });
      });
    },
  };
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new Error(`${what}: no result within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

function runCli(args: string[], env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [DIST_MAIN, ...args], { cwd: resolve('.'), env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}


describe('smoke test of the built server (node dist/main.js serve)', { skip: needsDist() }, () => {
  const dataDir = tempDir('was-smoke-');
  let server: Proc | undefined;
  let base = '';

  after(() => {
    for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function adminPost(path: string, body: unknown) {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as { success: boolean; data: any };
    assert.equal(res.status, 200, `${path}: ${JSON.stringify(json)}`);
    return json.data;
  }

  test('the server starts on PORT=0, logs its port and becomes ready', async () => {
    server = startProcess(['serve'], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, ADMIN_TOKEN });
    const startedLine = await server.waitFor((l) => l.msg === 'service started');
    assert.equal(startedLine.role, 'all');
    assert.equal(startedLine.database, 'sqlite');
    assert.ok(Number(startedLine.port) > 0);
    base = `http://127.0.0.1:${startedLine.port}`;
    const ready = await fetch(`${base}/readyz`);
    assert.equal(ready.status, 200);
    assert.ok(ready.headers.get('x-request-id'));
    assert.ok(existsSync(join(dataDir, 'service.db')), 'the database lives in DATA_DIR');
    assert.ok(existsSync(join(dataDir, 'secret.key')), 'SECRET_KEY was generated into DATA_DIR');
    assert.equal(lockHolderPid(join(dataDir, 'service.db')), server.child.pid, 'the server holds the lock');
    await assert.rejects(acquireServerLock(join(dataDir, 'service.db'), { waitMs: 0 }), /already uses the embedded SQLite database/, 'nobody else can take it');
  });

  let secret = '';
  let workspaceId = '';
  let keyId = '';

  test('admin API over a real socket creates a user, workspace, credits and a key; the key reads usage and balance', async () => {
    assert.ok(base, 'server started');
    const { user } = await adminPost('/admin/v1/users', { email: 'smoke@example.com', name: 'Smoke' });
    const { workspace } = await adminPost('/admin/v1/workspaces', { name: 'Smoke workspace', plan: 'pro', ownerUserId: user.id });
    workspaceId = workspace.id;
    await adminPost(`/admin/v1/workspaces/${workspaceId}/credits`, { amountMillicents: 12_345 });
    const created = await adminPost('/admin/v1/keys', { userId: user.id, workspaceIds: [workspaceId], scopes: [...SCOPES], operations: [], transports: ['rest'] });
    secret = created.secret;
    keyId = created.key.id;
    assert.match(secret, /^wask_/);

    const headers = { authorization: `Bearer ${secret}`, 'x-service-workspace': workspaceId };
    const usage = await fetch(`${base}/v1/usage`, { headers });
    const usageBody = (await usage.json()) as any;
    assert.equal(usage.status, 200, JSON.stringify(usageBody));
    assert.equal(usageBody.code, 'PUBLIC_USAGE_GET');
    assert.ok(usage.headers.get('ratelimit-limit'));
    const balance = await fetch(`${base}/v1/balance`, { headers });
    const balanceBody = (await balance.json()) as any;
    assert.equal(balance.status, 200, JSON.stringify(balanceBody));
    assert.equal(balanceBody.data.totalMillicents, 12_345);
    const bad = await fetch(`${base}/v1/balance`, { headers: { ...headers, authorization: 'Bearer wask_nope' } });
    assert.equal(bad.status, 401);
  });

  test('a queued run is executed by the job worker of the built server (ROLE=all)', async () => {
    assert.ok(workspaceId, 'workspace created');
    const { user } = await adminPost('/admin/v1/users', { email: 'runner@example.com', name: 'Runner' });
    const { workspace } = await adminPost('/admin/v1/workspaces', { name: 'Runs', plan: 'pro', ownerUserId: user.id });
    // A test key: its run is simulated work, whatever engines this machine has.
    await adminPost(`/admin/v1/workspaces/${workspace.id}/credits`, { amountMillicents: 1_000_000, mode: 'test' });
    const created = await adminPost('/admin/v1/keys', { userId: user.id, workspaceIds: [workspace.id], scopes: [...SCOPES], operations: [...OPERATION_IDS], transports: ['rest'], mode: 'test' });
    const headers = { authorization: `Bearer ${created.secret}`, 'x-service-workspace': workspace.id, 'content-type': 'application/json' };
    const run = await fetch(`${base}/v1/runs`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': 'smoke-run-1' },
      body: JSON.stringify({ operationId: 'speech.generate', input: { text: 'Hello from the smoke test.' } }),
    });
    const runBody = (await run.json()) as any;
    assert.equal(run.status, 202, JSON.stringify(runBody));
    const jobId = runBody.data.jobId as string;
    assert.ok(jobId, JSON.stringify(runBody));
    const readStatus = async () => {
      const job = (await (await fetch(`${base}/v1/jobs/${jobId}`, { headers })).json()) as any;
      return (job.data?.status ?? job.data?.job?.status) as string;
    };
    const status = await waitUntil(readStatus, (s) => s === 'completed' || s === 'failed', 'the job to end', 60_000, 100);
    assert.equal(status, 'completed', 'the job worker ran the job to completion');
  });

  test('the CLI runs beside the live server: quickstart works, and the server refuses a key revoked by the CLI within 2 s (auth epoch polled every 0.5 s)', async () => {
    assert.ok(secret, 'key created');
    const quick = runCli(['quickstart', '--email', 'cli@example.com'], { DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
    assert.equal(quick.status, 0, quick.stderr);
    const quickKey = /Live key \(shown once, keep it\): (wask_\S+)/.exec(quick.stdout)?.[1];
    const quickWs = /personal workspace ([0-9a-f-]{36})/.exec(quick.stdout)?.[1];
    assert.ok(quickKey && quickWs, quick.stdout);
    const quickRes = await fetch(`${base}/v1/usage`, { headers: { authorization: `Bearer ${quickKey}`, 'x-service-workspace': quickWs } });
    assert.equal(quickRes.status, 200, 'a key made by the CLI works on the live server');

    const revoke = runCli(['keys', 'revoke', '--key', keyId], { DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
    assert.equal(revoke.status, 0, revoke.stderr);
    const headers = { authorization: `Bearer ${secret}`, 'x-service-workspace': workspaceId };
    // A state wait (ends at the first 401): patient enough for a loaded machine.
    const status = await waitUntil(async () => (await fetch(`${base}/v1/usage`, { headers })).status, (s) => s === 401, 'the revoked key to be refused', 30_000, 50);
    assert.equal(status, 401, 'the revoked key is refused (auth epoch polled every 0.5 s)');
  });

  test('a second server on the same DATA_DIR exits 75 with the lock message after LOCK_WAIT_MS', async () => {
    assert.ok(server, 'first server running');
    const second = startProcess(['serve'], { PORT: '0', DATA_DIR: dataDir, ADMIN_TOKEN, LOCK_WAIT_MS: '200' });
    const code = await withTimeout(second.exit, 120_000, 'second server exit');
    assert.equal(code, LOCK_HELD_EXIT_CODE);
    const stderr = second.stderr.join('');
    assert.match(stderr, /already uses the embedded SQLite database/);
    assert.match(stderr, /PostgreSQL/);
    assert.equal((await fetch(`${base}/healthz`)).status, 200, 'the first server is unaffected');
  });

  test('SIGTERM finishes the request in flight, exits 0 without waiting out kept-alive connections and releases the lock', async () => {
    assert.ok(server, 'first server running');
    const body = JSON.stringify({ email: 'inflight@example.com', name: 'In flight' });
    const url = new URL(`${base}/admin/v1/users`);
    // `Expect: 100-continue` makes the server confirm that it has read the request head before
    // the client sends the body: from then on the request is in flight in the server.
    let inflight: ReturnType<typeof httpRequest> | undefined;
    let headRead: () => void = () => {};
    const serverHasHead = new Promise<void>((r) => (headRead = r));
    const response = new Promise<{ status: number; body: string }>((res, rej) => {
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: {
            authorization: `Bearer ${ADMIN_TOKEN}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            expect: '100-continue',
          },
        },
        (r) => {
          let text = '';
          r.setEncoding('utf8').on('data', (c: string) => (text += c));
          r.on('end', () => res({ status: r.statusCode ?? 0, body: text }));
        },
      );
      req.on('continue', () => headRead());
      req.on('error', rej);
      req.flushHeaders();
      inflight = req;
    });
    await withTimeout(serverHasHead, 10_000, '100 Continue');
    server.child.kill('SIGTERM');
    await server.waitFor((l) => l.msg === 'shutting down', 5000);
    await new Promise((r) => setTimeout(r, 200)); // the server is draining now
    inflight!.end(body);
    const res = await withTimeout(response, 5000, 'in-flight request');
    assert.equal(res.status, 200, res.body);
    assert.equal(JSON.parse(res.body).data.user.email, 'inflight@example.com');
    const code = await withTimeout(server.exit, 10_000, 'server exit');
    assert.equal(code, 0, server.stderr.join(''));
    // Keep-alive connections do not hold it open: a kept-alive socket stays open for Fastify's
    // 72 s keep-alive timeout, past the 25 s after which a stuck shutdown gives up with exit 1
    // and "graceful shutdown timed out". An orderly exit 0 proves it without a stopwatch.
    assert.ok(!server.lines.some((l) => l.msg === 'graceful shutdown timed out; exiting'), 'the shutdown did not time out');
    assert.ok(server.lines.some((l) => l.msg === 'stopped' && l.code === 0), 'logged a clean stop');
    const release = await acquireServerLock(join(dataDir, 'service.db'), { waitMs: 0 });
    release();
    await assert.rejects(fetch(`${base}/healthz`), 'nothing listens any more');
  });

  test('ROLE=worker starts without listening, keeps running, and stops on SIGTERM with exit 0', async () => {
    const workerDir = tempDir('was-smoke-worker-');
    try {
      const port = await freePort();
      const worker = startProcess(['serve'], { ROLE: 'worker', PORT: String(port), DATA_DIR: workerDir });
      const line = await worker.waitFor((l) => l.msg === 'service started');
      assert.equal(line.role, 'worker');
      assert.equal(line.listening, false);
      assert.equal(line.port, undefined);
      await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`), 'no HTTP listener');
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(worker.child.exitCode, null, 'a worker without a listener does not exit on its own');
      worker.child.kill('SIGTERM');
      assert.equal(await withTimeout(worker.exit, 10_000, 'worker exit'), 0);
    } finally {
      rmSync(workerDir, { recursive: true, force: true });
    }
  });

  test('the `worker` verb is ROLE=worker', async () => {
    const workerDir = tempDir('was-smoke-worker-');
    try {
      const worker = startProcess(['worker'], { PORT: '0', DATA_DIR: workerDir });
      const line = await worker.waitFor((l) => l.msg === 'service started');
      assert.equal(line.role, 'worker');
      assert.equal(line.listening, false);
      worker.child.kill('SIGTERM');
      assert.equal(await withTimeout(worker.exit, 10_000, 'worker exit'), 0);
    } finally {
      rmSync(workerDir, { recursive: true, force: true });
    }
  });

  test('an invalid configuration exits 78 listing every problem', async () => {
    const bad = startProcess(['serve'], { PORT: 'abc', ROLE: 'x' });
    assert.equal(await withTimeout(bad.exit, 10_000, 'exit'), 78);
    const stderr = bad.stderr.join('');
    assert.match(stderr, /PORT/);
    assert.match(stderr, /ROLE/);
  });
});
