/**
 * Set-up of the tests of the SDK's command-line client: the BUILT server as a process on a port
 * chosen here (so signed URLs name it: PUBLIC_BASE_URL), once per database a process can open
 * (SQLite, and PostgreSQL with TEST_DATABASE_URL), a Pro tenant made through the admin API, and
 * `was-client` runs (packages/sdk/dist/cli/main.js, built by `npm test`) with the tenant's
 * SERVICE_* environment and no terminal.
 */
import { after, before, describe } from 'node:test';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createTestDatabase, testDatabaseNames, type TestDatabase } from './support/databases.js';
import { distMissing, PROCESS_SECRET_KEY, seedTenantOverHttp, startServer, type HttpTenant, type ServerProcess } from './support/processes.js';

export const CLI_MAIN = resolve('packages/sdk/dist/cli/main.js');
export const cliMissing = distMissing || !existsSync(CLI_MAIN);

export interface ServiceUnderTest {
  server: ServerProcess;
  tenant: HttpTenant;
  dataDir: string;
  /** SERVICE_URL, SERVICE_API_KEY, SERVICE_WORKSPACE of the tenant. */
  env: Record<string, string>;
}

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => res(port));
    });
  });
}

/** Runs `body` once per database a server process can use, each with its own server and tenant. */
export function describeEachServer(title: string, body: (get: () => ServiceUnderTest) => void, env: Record<string, string> = {}): void {
  const names = testDatabaseNames().filter((n) => n !== 'pglite');
  for (const name of names) {
    describe(`${title} [${name}]`, { skip: cliMissing ? 'run `npm run build` first (npm test does)' : false }, () => {
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
        const tenant = await seedTenantOverHttp(base, 10_000_000, { pointsPerMinute: 100_000, pointsPerMonth: 10_000_000 });
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
