/**
 * Set-up of the SDK's tests (test/sdk/*.test.ts). They run on SQLite, and on PostgreSQL with
 * TEST_DATABASE_URL, but not on PGlite: the client sees no difference between the dialects, and a
 * PGlite suite's start-up is the slowest part of a run on a busy machine.
 *
 * - `describeSdkDatabases`: the in-process app per database (the harness's contexts).
 * - `describeEachServer`: the BUILT server as a process on a port chosen here (so signed URLs name
 *   it: PUBLIC_BASE_URL), a Pro tenant made through the admin API, for was-client: the binary
 *   (packages/sdk/dist/cli/main.js, built by `npm test`) spawned without a terminal, or its
 *   command line run in this process (`runCli`) where a process exit adds nothing.
 */
import { after, before, describe } from 'node:test';
import { Writable } from 'node:stream';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createTestDatabase, testDatabaseNames, type TestDatabase, type TestDatabaseName } from './databases.js';
import { describeEachDatabase, type HarnessOptions, type TestContext } from './harness.js';
import { main } from '../../packages/sdk/src/cli/run.js';
import { distMissing, PROCESS_SECRET_KEY, seedTenantOverHttp, startServer, type HttpTenant, type ServerProcess } from './processes.js';
import { requireOrSkip } from './requirements.js';
import { freePort } from './free-port.js';

export const CLI_MAIN = resolve('packages/sdk/dist/cli/main.js');
export const cliMissing = distMissing || !existsSync(CLI_MAIN);

export interface ServiceUnderTest {
  server: ServerProcess;
  tenant: HttpTenant;
  dataDir: string;
  /** SERVICE_URL, SERVICE_API_KEY, SERVICE_WORKSPACE of the tenant. */
  env: Record<string, string>;
}

function sdkDatabases(): TestDatabaseName[] {
  return testDatabaseNames().filter((n) => n !== 'pglite');
}

/** describeEachDatabase of the harness, on SQLite and PostgreSQL only. */
export function describeSdkDatabases(title: string, body: (get: () => TestContext) => void, options: HarnessOptions = {}): void {
  describeEachDatabase(title, body, options, sdkDatabases());
}

/** Runs `body` once per database a server process can use, each with its own server and tenant. */
export function describeEachServer(title: string, body: (get: () => ServiceUnderTest) => void, env: Record<string, string> = {}): void {
  for (const name of sdkDatabases()) {
    describe(`${title} [${name}]`, { skip: cliMissing ? requireOrSkip('the SDK and was-client builds are missing: run `npm run build` first (npm test does)') : false }, () => {
      let sut: ServiceUnderTest | undefined;
      let database: TestDatabase | undefined;
      before(async () => {
        database = await createTestDatabase(name);
        const dataDir = mkdtempSync(join(tmpdir(), 'was-sdk-cli-'));
        const port = await freePort();
        const server = await startServer({
          DATABASE_URL: database.url!,
          DATA_DIR: dataDir,
          SECRET_KEY: PROCESS_SECRET_KEY,
          PORT: String(port),
          PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
          ...env,
        });
        const base = `http://127.0.0.1:${port}`;
        // A test key: the SDK and was-client run simulated work, as an integration developer's would.
        const tenant = await seedTenantOverHttp(base, 10_000_000, { pointsPerMinute: 100_000, pointsPerMonth: 10_000_000 }, { mode: 'test' });
        sut = { server: { ...server, base }, tenant, dataDir, env: { SERVICE_URL: base, SERVICE_API_KEY: tenant.secret, SERVICE_WORKSPACE: tenant.workspaceId } };
      });
      after(async () => {
        await sut?.server.stop();
        await database?.dispose();
        if (sut) rmSync(sut.dataDir, { recursive: true, force: true });
      });
      body(() => {
        if (!sut) throw new Error('service not started');
        return sut;
      });
    });
  }
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs was-client to its end (stdin, stdout and stderr are pipes: not a terminal). */
export function cli(args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<CliResult> {
  const child = spawnCli(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  return new Promise((res, rej) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      rej(new Error(`was-client ${args.join(' ')} did not finish in ${timeoutMs} ms; stdout ${stdout}; stderr ${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      res({ code, stdout, stderr });
    });
  });
}

/** Runs was-client's command line in this process (no spawn), with output streams that are not terminals. */
export async function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const sink = (append: (s: string) => void) =>
    new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        append(String(chunk));
        done();
      },
    });
  const code = await main(args, env, { stdout: sink((s) => (stdout += s)), stderr: sink((s) => (stderr += s)) });
  return { code, stdout, stderr };
}

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

export function spawnCli(args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [CLI_MAIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: tmpdir(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}
