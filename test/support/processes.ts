/**
 * The BUILT server (`node dist/main.js serve`) as child processes over real sockets, for tests
 * that need several processes or a real crash (kill -9): start with an environment, wait for the
 * "service started" log line, call it over HTTP, stop it gracefully or kill it. Every child is
 * killed when the test process ends, so a failed test never leaves a server behind.
 * `npm test` builds first; `distMissing` lets a suite skip with a message when it did not.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { SCOPES } from '../../src/modules/auth/scopes.js';
import { OPERATION_IDS } from '../../src/operations/ids.js';
import { scopeFor } from '../../src/lib/livemode.js';

export const DIST_MAIN = resolve('dist/main.js');
export const distMissing = !existsSync(DIST_MAIN);
export const PROCESS_ADMIN_TOKEN = 'process-admin-token-0123456789';
export const PROCESS_SECRET_KEY = 'process-secret-key-0123456789abcdef0123456789ab';

type LogLine = Record<string, unknown>;

export interface ServerProcess {
  child: ChildProcess;
  /** http://127.0.0.1:PORT, or '' for a process without a listener (ROLE=worker). */
  base: string;
  lines: LogLine[];
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** kill -9: no shutdown code runs (no lease release, no lock removal). */
  crash(): Promise<void>;
  /** SIGTERM and wait for the exit (graceful shutdown). */
  stop(): Promise<number | null>;
}

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/**
 * Calls `onLine` with every line a child process writes to `stream`, parsed as a JSON log line
 * (pino); a line that is not JSON arrives as `{msg: text}`.
 */
export function onLogLines<T extends Record<string, unknown> = Record<string, unknown>>(stream: NodeJS.ReadableStream, onLine: (line: T) => void): void {
  let buffer = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const text = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      let line: T;
      try {
        line = JSON.parse(text) as T;
      } catch {
        line = { msg: text } as unknown as T;
      }
      onLine(line);
    }
  });
}

/**
 * Starts `node dist/main.js serve` with `env` (and `nodeArgs` before the script, such as a
 * preload) and resolves once it logged "service started".
 */
export async function startServer(env: Record<string, string>, timeoutMs = 60_000, nodeArgs: string[] = []): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...nodeArgs, DIST_MAIN, 'serve'], {
    cwd: resolve('.'),
    // No SIMULATE_LIVE (support/harness.ts says why): simulated work runs with test keys
    // (seedTenantOverHttp `{ mode: 'test' }`); a test of the rule itself sets it.
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: '0', ADMIN_TOKEN: PROCESS_ADMIN_TOKEN, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const lines: LogLine[] = [];
  let stderr = '';
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => child.on('exit', (code, signal) => res({ code, signal })));
  const started = new Promise<LogLine>((res, rej) => {
    onLogLines<LogLine>(child.stdout!, (line) => {
      lines.push(line);
      if (line.msg === 'service started') res(line);
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    void exit.then(({ code, signal }) => rej(new Error(`server exited (${code ?? signal}) before it started; stderr: ${stderr}; stdout: ${JSON.stringify(lines)}`)));
    setTimeout(() => rej(new Error(`server did not start within ${timeoutMs} ms; stderr: ${stderr}`)), timeoutMs).unref();
  });
  // A server that never reports its start is killed: left running, it would keep the test file
  // (and the run) waiting on its pipes forever.
  const line = await started.catch((err: unknown) => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    throw err;
  });
  return {
    child,
    base: line.port ? `http://127.0.0.1:${String(line.port)}` : '',
    lines,
    exit,
    async crash() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exit;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const { code } = await exit;
      clearTimeout(timer);
      return code;
    },
  };
}

export interface HttpResult {
  status: number;
  body: any;
}

/** One JSON request; never throws for an HTTP status. */
export async function httpJson(base: string, method: string, path: string, o: { headers?: Record<string, string>; body?: unknown } = {}): Promise<HttpResult> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}), ...o.headers },
    ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** GET /v1/jobs/{id} of a server process as the tenant: the job (a 200 asserted). */
export async function readJob(base: string, t: HttpTenant, jobId: string): Promise<any> {
  const r = await httpJson(base, 'GET', `/v1/jobs/${jobId}`, { headers: t.headers });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.data;
}

export async function adminPost(base: string, path: string, body: unknown): Promise<any> {
  const r = await httpJson(base, 'POST', path, { headers: { authorization: `Bearer ${PROCESS_ADMIN_TOKEN}` }, body });
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data;
}

export interface HttpTenant {
  workspaceId: string;
  secret: string;
  headers: Record<string, string>;
}

/**
 * A user, a pro workspace with `credits` and an all-powerful key, through the admin API; `more`
 * adds workspace settings (budgets, lowCreditsMillicents …) and key fields (budgets …). With
 * `mode: 'test'` the key is a test key (simulated work) and `credits` are granted to the test
 * balance (on top of its first grant of TEST_CREDITS_MILLICENTS; a server started with
 * TEST_CREDITS_MILLICENTS=0 makes them exactly `credits`).
 */
export async function seedTenantOverHttp(
  base: string,
  credits: number,
  limits?: Record<string, number>,
  more: { settings?: Record<string, unknown>; key?: Record<string, unknown>; mode?: 'live' | 'test' } = {},
): Promise<HttpTenant & { keyId: string; scope: string }> {
  const email = `proc-${Date.now()}-${Math.random().toString(16).slice(2)}@example.com`;
  const { user } = await adminPost(base, '/admin/v1/users', { email, name: 'Process test' });
  const { workspace } = await adminPost(base, '/admin/v1/workspaces', { name: 'Process workspace', plan: 'pro', ownerUserId: user.id });
  if (limits || more.settings) await adminPost(base, `/admin/v1/workspaces/${workspace.id}/settings`, { ...(limits ? { limits } : {}), ...more.settings });
  const mode = more.mode ?? 'live';
  await adminPost(base, `/admin/v1/workspaces/${workspace.id}/credits`, { amountMillicents: credits, ...(mode === 'test' ? { mode } : {}) });
  const { key, secret } = await adminPost(base, '/admin/v1/keys', {
    userId: user.id,
    workspaceIds: [workspace.id],
    scopes: [...SCOPES],
    operations: [...OPERATION_IDS],
    transports: ['rest'],
    ...(mode === 'test' ? { mode } : {}),
    ...more.key,
  });
  // scope: the id its rows are stored under (the test twin's for a test key), for database reads.
  return { workspaceId: workspace.id, keyId: key.id, secret, headers: { authorization: `Bearer ${secret}`, 'x-service-workspace': workspace.id }, scope: scopeFor(workspace.id, mode) };
}

