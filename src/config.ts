/**
 * The one reader of the environment. Every variable is validated up front; all problems are
 * listed together and start-up stops (decisions.md section 4).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import { isValidRange } from './lib/ip-ranges.js';
import { loadProvidersFile, type ProvidersFile } from './providers/providers-file.js';
import { SIMULATED_DEFAULT_DELAY_MS } from './providers/simulated.js';
import { DEFAULT_LOCK_WAIT_MS } from './process-lock.js';

export type Role = 'api' | 'worker' | 'all';
export type SqliteSynchronous = 'normal' | 'full';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  port: number;
  /** METRICS_PORT: a listener serving only /metrics and /healthz (the way to scrape ROLE=worker). */
  metricsPort: number | undefined;
  host: string;
  /** `sqlite:PATH` or `postgres://…`; default `sqlite:DATA_DIR/service.db`. */
  databaseUrl: string;
  dataDir: string;
  mediaStore: string;
  s3Endpoint: string | undefined;
  publicBaseUrl: string;
  adminToken: string | undefined;
  /** Undefined until resolved by `resolveSecretKey` (generated for embedded deployments). */
  secretKey: string | undefined;
  egressAllowCidrs: string[];
  trustedProxies: string[];
  role: Role;
  webhookRetryBaseMs: number;
  webhookRetryCapMs: number;
  webhookMaxAttempts: number;
  /** Deadline of one webhook delivery attempt (connect, send, response headers and body). */
  webhookTimeoutMs: number;
  /** Days an event (and its finished webhook deliveries) is kept before housekeeping deletes it. */
  eventRetentionDays: number;
  outputCursorTtlS: number;
  mediaUrlTtlS: number;
  /** Region of the S3 client (AWS_REGION, else AWS_DEFAULT_REGION, else us-east-1); credentials stay with the AWS SDK's own chain. */
  s3Region: string;
  jobLeaseMs: number;
  /** Jobs one worker process runs at once (provider work is mostly waiting; plan limits still cap each workspace). */
  jobConcurrency: number;
  /** Job streams (SSE) one API process holds open at once, over all workspaces and keys. */
  streamsPerProcess: number;
  providersFile: string | undefined;
  /** The validated providers file (decisions.md section 5); undefined: live keys get the machine's local engines. */
  providers: ProvidersFile | undefined;
  /**
   * SIMULATE_LIVE: live keys run every operation without a real provider on the simulated
   * provider, charged as real work (without a file: every paid operation, as before test mode).
   * Staging servers and black-box test rigs only, never production.
   */
  simulateLive: boolean;
  /** Where local engines' programs are (PATH when unset). */
  ffmpegPath: string | undefined;
  ffprobePath: string | undefined;
  espeakPath: string | undefined;
  logLevel: LogLevel;
  /** SIMULATED_DELAY_MS: how long simulated work takes when its text names no `[sim:delay=…]` (default 50). */
  simulatedDelayMs: number;
  /** How often a process writes its usage-point deltas to the shared counters. */
  usageFlushMs: number;
  /** TEST_CREDITS_MILLICENTS: the grant a workspace's test balance starts with (decisions.md "Test mode"). */
  testCreditsMillicents: number;
  /** LOCK_WAIT_MS: how long a server start waits for the embedded database's lock held by another live process. */
  lockWaitMs: number;
  /**
   * SQLITE_SYNCHRONOUS: `normal` (default; an acknowledged change survives a process crash, the
   * last ones may be lost in an OS crash or power cut) or `full` (it survives those too).
   */
  sqliteSynchronous: SqliteSynchronous;
  /**
   * Browser origins allowed to call /mcp (MCP_ALLOWED_ORIGINS; default: the origin of
   * PUBLIC_BASE_URL). A request with any other Origin is refused 403 (DNS-rebinding defence);
   * requests without Origin (non-browser clients) are not affected.
   */
  mcpAllowedOrigins: string[];
}

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/**
 * MCP_ALLOWED_ORIGINS: comma-separated origins (`https://app.example.com`, `http://localhost:6274`),
 * each exactly scheme://host[:port] as browsers send it; unset: the origin of PUBLIC_BASE_URL.
 */
function originList(raw: string | undefined, publicBaseUrl: string, problems: string[]): string[] {
  if (raw === undefined) {
    try {
      return [new URL(publicBaseUrl).origin];
    } catch {
      return []; // PUBLIC_BASE_URL's own problem is reported
    }
  }
  const items = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const item of items) {
    let origin: string | undefined;
    try {
      origin = new URL(item).origin;
    } catch {
      origin = undefined;
    }
    if (origin === undefined || origin === 'null' || origin !== item.toLowerCase().replace(/\/$/, '') || !/^https?:/.test(origin)) {
      problems.push(`MCP_ALLOWED_ORIGINS: "${item}" is not an origin such as https://app.example.com (scheme, host and port only)`);
    }
  }
  return items.map((item) => item.toLowerCase().replace(/\/$/, ''));
}

export function isPostgresUrl(url: string): boolean {
  return url.startsWith('postgres://') || url.startsWith('postgresql://');
}

/**
 * Reads the environment's values, collecting every problem (so they are all listed at once): an
 * empty value counts as unset.
 */
/** A workspace's first test balance: 100 dollars of make-believe credits (decisions.md "Test mode"). */
export const DEFAULT_TEST_CREDITS_MILLICENTS = 10_000_000;

class EnvReader {
  readonly problems: string[] = [];
  constructor(readonly env: Env) {}

  str(name: string): string | undefined {
    const v = this.env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  }

  int(name: string, def: number, min: number, max: number): number {
    const raw = this.str(name);
    if (raw === undefined) return def;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      this.problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return def;
    }
    return Number(raw);
  }

  bool(name: string, def: boolean): boolean {
    const raw = this.str(name);
    if (raw === undefined) return def;
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    this.problems.push(`${name} must be true or false (got "${raw}")`);
    return def;
  }

  cidrList(name: string): string[] {
    const raw = this.str(name);
    if (raw === undefined) return [];
    const items = raw.split(',').map((s) => s.trim()).filter(Boolean);
    // Canonical notation only (lib/ip-ranges.ts): `0177.1` or `010.0.0.0/8` would otherwise be read
    // as octal, and a leading-zero typo would trust or allow another network.
    for (const item of items) {
      if (!isValidRange(item)) this.problems.push(`${name}: "${item}" is not an IP address or CIDR range in canonical notation (e.g. 10.0.0.0/8, 2001:db8::/32)`);
    }
    return items;
  }
}

/** Where the service listens and the address it is reached at. */
function listening(r: EnvReader) {
  const port = r.int('PORT', 8080, 0, 65535);
  const metricsPort = r.str('METRICS_PORT') === undefined ? undefined : r.int('METRICS_PORT', 0, 0, 65535);
  const host = r.str('HOST') ?? '127.0.0.1';
  if (!ipaddr.isValid(host) && !/^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(host)) {
    r.problems.push(`HOST must be an IP address or a host name (got "${host}")`);
  }
  const publicBaseUrl = (r.str('PUBLIC_BASE_URL') ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '');
  if (!isHttpUrl(publicBaseUrl)) r.problems.push(`PUBLIC_BASE_URL must be an http(s) URL (got "${publicBaseUrl}")`);
  else if (!isPlainBaseUrl(publicBaseUrl)) r.problems.push(`PUBLIC_BASE_URL must be a plain base URL without credentials, query or fragment (got "${publicBaseUrl}")`);
  return { port, metricsPort, host, publicBaseUrl };
}

/** Where the data lives: the data directory, the database and the media store. */
function storage(r: EnvReader) {
  const dataDirSetting = r.str('DATA_DIR') ?? './data';
  const dataDir = resolve(dataDirSetting);
  // The embedded database lives in DATA_DIR unless DATABASE_URL says otherwise, so one DATA_DIR
  // is one deployment (database, media, secret key) and its server lock covers all of it.
  const databaseUrl = r.str('DATABASE_URL') ?? `sqlite:${dataDirSetting.replace(/\/+$/, '')}/service.db`;
  if (!databaseUrl.startsWith('sqlite:') && !isPostgresUrl(databaseUrl)) {
    r.problems.push(`DATABASE_URL must be sqlite:PATH or postgres://… (got "${redactUrlPassword(databaseUrl)}")`);
  } else if (databaseUrl.startsWith('sqlite:') && databaseUrl.length === 'sqlite:'.length) {
    r.problems.push('DATABASE_URL sqlite: needs a file path (sqlite:./data/service.db)');
  } else if (isPostgresUrl(databaseUrl) && !isParsableUrl(databaseUrl)) {
    r.problems.push('DATABASE_URL is not a valid postgres:// URL');
  }
  const mediaStore = r.str('MEDIA_STORE') ?? 'local';
  if (mediaStore !== 'local' && !/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/.*)?$/.test(mediaStore)) {
    r.problems.push(`MEDIA_STORE must be "local" or s3://bucket/prefix (got "${mediaStore}")`);
  }
  const s3Endpoint = r.str('S3_ENDPOINT');
  if (s3Endpoint !== undefined && !isHttpUrl(s3Endpoint)) r.problems.push('S3_ENDPOINT must be an http(s) URL');
  const s3Region = r.str('AWS_REGION') ?? r.str('AWS_DEFAULT_REGION') ?? 'us-east-1';
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(s3Region)) r.problems.push(`AWS_REGION must be a region name such as eu-west-1 (got "${s3Region}")`);
  const sqliteSynchronous = (r.str('SQLITE_SYNCHRONOUS') ?? 'normal').toLowerCase();
  if (sqliteSynchronous !== 'normal' && sqliteSynchronous !== 'full') r.problems.push(`SQLITE_SYNCHRONOUS must be normal or full (got "${r.str('SQLITE_SYNCHRONOUS')}")`);
  return { dataDir, databaseUrl, mediaStore, s3Endpoint, s3Region, sqliteSynchronous: sqliteSynchronous as SqliteSynchronous };
}

/** The operator's secrets, the process role and the log level. */
function operation(r: EnvReader, databaseUrl: string) {
  const adminToken = r.str('ADMIN_TOKEN');
  if (adminToken !== undefined && adminToken.length < 16) r.problems.push('ADMIN_TOKEN must be at least 16 characters');
  const secretKey = r.str('SECRET_KEY');
  if (secretKey !== undefined && secretKey.length < 32) r.problems.push('SECRET_KEY must be at least 32 characters');
  if (secretKey === undefined && isPostgresUrl(databaseUrl)) {
    r.problems.push('SECRET_KEY is required with PostgreSQL (every process must share it); generate one with: openssl rand -hex 32');
  }
  const role = r.str('ROLE') ?? 'all';
  if (role !== 'api' && role !== 'worker' && role !== 'all') r.problems.push(`ROLE must be api, worker or all (got "${role}")`);
  const logLevel = r.str('LOG_LEVEL') ?? 'info';
  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
  if (!levels.includes(logLevel)) r.problems.push(`LOG_LEVEL must be one of ${levels.join(', ')} (got "${logLevel}")`);
  return { adminToken, secretKey, role: role as Role, logLevel: logLevel as LogLevel };
}

/** The providers file, read and checked (its problems join the others). */
function providersOf(r: EnvReader) {
  const providersFile = r.str('PROVIDERS_FILE');
  const simulateLive = r.bool('SIMULATE_LIVE', false);
  let providers: ProvidersFile | undefined;
  if (providersFile !== undefined && !existsSync(providersFile)) r.problems.push(`PROVIDERS_FILE: no file at "${providersFile}"`);
  else if (providersFile !== undefined) {
    const loaded = loadProvidersFile(providersFile, r.env);
    r.problems.push(...loaded.problems);
    providers = loaded.file;
    if (providers && !simulateLive) r.problems.push(...simulatedForLiveKeys(providers));
  }
  return { providersFile, providers, simulateLive };
}

/**
 * What in a providers file would run live keys on the simulated provider, as start-up problems
 * saying what to do (docs/decisions.md "Test mode": live keys never run simulated work; test keys
 * always do, whatever the file says).
 */
function simulatedForLiveKeys(file: ProvidersFile): string[] {
  const fix = 'test keys (wask_test_…) run every operation on the simulated provider anyway; remove it, or set SIMULATE_LIVE=true on a staging server (never in production)';
  const problems: string[] = [];
  if (file.simulated === 'fallback') problems.push(`PROVIDERS_FILE simulated: "fallback" would run live keys' unmapped operations on the simulated provider; ${fix}`);
  for (const route of file.operations.values()) {
    if (route.engine === 'sprites' && (route.frames ?? 'simulated') === 'simulated') {
      problems.push(`PROVIDERS_FILE operations.${route.operationId}: frames "simulated" would draw live keys' sprite frames on the simulated provider; name a provider that makes images, or ${fix}`);
    }
    // "simulated" needs no declaration: an undeclared provider of that name is the built-in one.
    if ((file.providers.get(route.provider)?.type ?? (route.provider === 'simulated' ? 'simulated' : undefined)) === 'simulated') {
      problems.push(`PROVIDERS_FILE operations.${route.operationId}: provider "${route.provider}" is simulated and would run live keys on it; ${fix}`);
    }
  }
  return problems;
}

/** Tunables of the workers, webhooks, streams, media URLs and local engines. */
function tunables(r: EnvReader, databaseUrl: string) {
  return {
    egressAllowCidrs: r.cidrList('EGRESS_ALLOW_CIDRS'),
    trustedProxies: r.cidrList('TRUSTED_PROXIES'),
    webhookRetryBaseMs: r.int('WEBHOOK_RETRY_BASE_MS', 30_000, 1, 86_400_000),
    webhookRetryCapMs: r.int('WEBHOOK_RETRY_CAP_MS', 3_600_000, 1, 86_400_000),
    webhookMaxAttempts: r.int('WEBHOOK_MAX_ATTEMPTS', 12, 1, 100),
    webhookTimeoutMs: r.int('WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    eventRetentionDays: r.int('EVENT_RETENTION_DAYS', 30, 1, 3650),
    outputCursorTtlS: r.int('OUTPUT_CURSOR_TTL_S', 1800, 1, 86_400),
    mediaUrlTtlS: r.int('MEDIA_URL_TTL_S', 900, 1, 604_800),
    jobLeaseMs: r.int('JOB_LEASE_MS', 30_000, 1000, 3_600_000),
    jobConcurrency: r.int('JOB_CONCURRENCY', 32, 1, 1024),
    streamsPerProcess: r.int('STREAMS_PER_PROCESS', 1000, 1, 100_000),
    ffmpegPath: r.str('FFMPEG_PATH'),
    ffprobePath: r.str('FFPROBE_PATH'),
    espeakPath: r.str('ESPEAK_NG_PATH'),
    simulatedDelayMs: r.int('SIMULATED_DELAY_MS', SIMULATED_DEFAULT_DELAY_MS, 0, 600_000),
    usageFlushMs: r.int('USAGE_FLUSH_MS', isPostgresUrl(databaseUrl) ? 100 : 1000, 10, 60_000),
    lockWaitMs: r.int('LOCK_WAIT_MS', DEFAULT_LOCK_WAIT_MS, 0, 600_000),
    testCreditsMillicents: r.int('TEST_CREDITS_MILLICENTS', DEFAULT_TEST_CREDITS_MILLICENTS, 0, 1_000_000_000_000),
  };
}

export function loadConfig(env: Env = process.env): Config {
  const r = new EnvReader(env);
  const listen = listening(r);
  const stored = storage(r);
  const config: Config = {
    ...listen,
    ...stored,
    ...operation(r, stored.databaseUrl),
    ...providersOf(r),
    ...tunables(r, stored.databaseUrl),
    mcpAllowedOrigins: originList(r.str('MCP_ALLOWED_ORIGINS'), listen.publicBaseUrl, r.problems),
  };
  if (config.webhookRetryCapMs < config.webhookRetryBaseMs) r.problems.push('WEBHOOK_RETRY_CAP_MS must be at least WEBHOOK_RETRY_BASE_MS');
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}

function isParsableUrl(value: string): boolean {
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

/** A database URL fit for an error message: the password, if any, replaced. */
function redactUrlPassword(value: string): string {
  return value.replace(/(\/\/[^:/@]*:)[^@/]*@/, '$1***@');
}

/** The file of an embedded SQLite database URL, or undefined (PostgreSQL, in-memory). */
export function sqliteFile(databaseUrl: string): string | undefined {
  if (!databaseUrl.startsWith('sqlite:')) return undefined;
  const path = databaseUrl.slice('sqlite:'.length);
  return path === ':memory:' ? undefined : resolve(path);
}

/** Signed URLs are built by appending paths to it: a query, fragment or credentials would break them. */
function isPlainBaseUrl(value: string): boolean {
  const u = new URL(value);
  return u.search === '' && u.hash === '' && !value.includes('?') && !value.includes('#') && u.username === '' && u.password === '';
}

function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * SECRET_KEY for an embedded deployment: read from DATA_DIR/secret.key, or generated there on the
 * first start (mode 0600). With PostgreSQL it must come from the environment (checked above).
 */
export function resolveSecretKey(config: Config): string {
  if (config.secretKey) return config.secretKey;
  mkdirSync(config.dataDir, { recursive: true });
  const file = join(config.dataDir, 'secret.key');
  if (existsSync(file)) {
    const stored = readFileSync(file, 'utf8').trim();
    if (stored.length < 32) throw new ConfigError([`${file} holds a secret shorter than 32 characters`]);
    return stored;
  }
  const generated = randomBytes(32).toString('hex');
  try {
    writeFileSync(file, `${generated}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process (a CLI command beside the first start) wrote it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return resolveSecretKey(config);
    throw err;
  }
  return generated;
}
