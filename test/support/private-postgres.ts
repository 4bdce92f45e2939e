/**
 * A PRIVATE PostgreSQL cluster for fault tests that stop and restart the server (issue 32, item 3):
 * made with initdb in a temp directory, served by pg_ctl on a free loopback port, stopped and
 * removed by `dispose()` (and, if the test process dies first, stopped by an exit hook). The shared
 * server of TEST_DATABASE_URL is never touched.
 *
 * The programs come from PATH or from the Debian packages' directory (the newest version there).
 * initdb refuses to run as root: as root, every program runs as the `postgres` OS user (runuser),
 * in a directory handed to that user. `privatePostgresMissing` gives the reason a test skips (or,
 * with CI=true, fails) when the programs or that user are missing.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, appendFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const DEBIAN_DIR = '/usr/lib/postgresql';

function onPath(program: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(join(dir, program))) return join(dir, program);
  }
  return undefined;
}

/** The directory holding initdb and pg_ctl, or undefined. */
function findBinDir(): string | undefined {
  const initdb = onPath('initdb');
  if (initdb && onPath('pg_ctl')) return initdb.slice(0, -'/initdb'.length);
  if (!existsSync(DEBIAN_DIR)) return undefined;
  const versions = readdirSync(DEBIAN_DIR)
    .filter((v) => /^\d+$/.test(v) && existsSync(join(DEBIAN_DIR, v, 'bin', 'initdb')) && existsSync(join(DEBIAN_DIR, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(DEBIAN_DIR, versions[0], 'bin') : undefined;
}

const isRoot = process.getuid?.() === 0;

function postgresUser(): { uid: number; gid: number } | undefined {
  const r = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const g = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (r.status !== 0 || g.status !== 0) return undefined;
  return { uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
}

const binDir = findBinDir();
const owner = isRoot ? postgresUser() : undefined;

/** Why a private cluster cannot be made here, or false when it can. */
export const privatePostgresMissing: string | false = !binDir
  ? 'initdb and pg_ctl are missing (neither on PATH nor under the Debian packages directory): apt-get install postgresql'
  : isRoot && !owner
    ? 'running as root, and there is no `postgres` OS user to run initdb as'
    : isRoot && !onPath('runuser')
      ? 'running as root, and runuser is missing'
      : false;

/** The skip reason of a suite: a message, or false; with CI=true a missing program fails instead. */
export function privatePostgresSkip(): string | false {
  if (!privatePostgresMissing) return false;
  if (process.env.CI === 'true') throw new Error(`CI=true and a private PostgreSQL cluster cannot be made: ${privatePostgresMissing}`);
  return privatePostgresMissing;
}

/** An argument array that runs `program` as the cluster's owner. */
function asOwner(program: string, args: string[]): [string, string[]] {
  const path = join(binDir!, program);
  return isRoot ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args];
}

function run(program: string, args: string[], timeoutMs = 60_000): Promise<{ code: number | null; output: string }> {
  const [cmd, argv] = asOwner(program, args);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', LC_ALL: 'C' } });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

async function check(program: string, args: string[], timeoutMs?: number): Promise<void> {
  const r = await run(program, args, timeoutMs);
  if (r.code !== 0) throw new Error(`${program} ${args.join(' ')} exited ${r.code}: ${r.output}`);
}

/** A free TCP port on loopback (nothing listens on it when this returns). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  url: string;
  port: number;
  /** Stops the server: `fast` ends sessions with an error first; `immediate` kills them (a crash). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** The server's log so far (for failure messages). */
  log(): string;
  /** Stops the server and removes the cluster. */
  dispose(): Promise<void>;
}

const live = new Set<string>();
process.on('exit', () => {
  for (const dataDir of live) {
    const [cmd, argv] = asOwner('pg_ctl', ['-D', dataDir, 'stop', '-m', 'immediate', '-w']);
    spawnSync(cmd, argv, { stdio: 'ignore', timeout: 10_000 });
    rmSync(join(dataDir, '..'), { recursive: true, force: true });
  }
});

/** initdb + pg_ctl start on a free loopback port; sessions need no password (trust, loopback only). */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  if (privatePostgresMissing) throw new Error(privatePostgresMissing);
  const root = mkdtempSync(join(tmpdir(), 'was-private-pg-'));
  const dataDir = join(root, 'data');
  const logFile = join(root, 'server.log');
  if (owner) chownSync(root, owner.uid, owner.gid);
  live.add(dataDir);
  let started = false;
  const stop = async (mode: 'fast' | 'immediate' = 'fast') => {
    await check('pg_ctl', ['-D', dataDir, 'stop', '-m', mode, '-w', '-t', '60']);
    started = false;
  };
  const dispose = async () => {
    if (started) await stop('immediate').catch(() => {});
    live.delete(dataDir);
    rmSync(root, { recursive: true, force: true });
  };
  try {
    await check('initdb', ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
    const port = await freeLoopbackPort();
    // Durability against an OS crash is not what these tests exercise (a stopped or killed server,
    // not a lost page cache): fsync off keeps them fast on a shared machine.
    appendFileSync(
      join(dataDir, 'postgresql.conf'),
      `\nport = ${port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${root}'\nfsync = off\nmax_connections = 200\nshared_buffers = 32MB\n`,
    );
    const start = async () => {
      await check('pg_ctl', ['-D', dataDir, '-l', logFile, '-w', '-t', '60', 'start']);
      started = true;
    };
    await start();
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      port,
      stop,
      start,
      log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
      dispose,
    };
  } catch (err) {
    await dispose();
    throw err;
  }
}
