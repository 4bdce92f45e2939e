/**
 * `was-client listen --forward-to URL [--types …] [--state FILE]`: webhooks on a laptop. Pulls the
 * workspace event feed (GET /v1/events) and POSTs each event to a local URL exactly as the
 * service's webhook delivery would: the same body, `Service-Event-Id`, and `Service-Signature`
 * signed at send time with a local secret (printed at start). A receiver written for real
 * webhooks works unchanged.
 *
 * Exactly once across restarts: the state file holds the feed cursor of the current page and the
 * ids of that page's events already forwarded; it is rewritten (atomically: temp file + rename)
 * after every event, and a restart skips those ids. A graceful stop (SIGINT, SIGTERM) lets the
 * request in flight finish first. Only a hard kill between a receiver's 2xx and the state write
 * can send that one event again, with the same Service-Event-Id (receivers deduplicate by it).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { ServiceError } from '../errors.js';
import { backoffDelay, sleep } from '../transport.js';
import type { ServiceEvent } from '../types.js';
import { signWebhook } from '../webhooks.js';
import { UsageError, type Config } from './args.js';
import type { Context } from './commands.js';
import { eventSubject } from './commands.js';
import { EXIT } from './output.js';

interface ListenState {
  serviceUrl: string;
  workspaceId: string;
  /** The signing secret receivers verify with (kept, so a restart does not change it). */
  secret: string;
  /** Where the current page starts (undefined: the start of the feed). */
  cursor: string | undefined;
  /** Events of the current page already forwarded (or refused for good). */
  forwarded: string[];
}

/** $XDG_STATE_HOME/was-client (else ~/.local/state/was-client)/listen-<hash of URL and workspace>.json */
export function defaultStatePath(config: Config, env: NodeJS.ProcessEnv): string {
  const base = env.XDG_STATE_HOME && env.XDG_STATE_HOME.startsWith('/') ? env.XDG_STATE_HOME : join(homedir(), '.local', 'state');
  const id = createHash('sha256').update(`${config.url.replace(/\/+$/, '')}\n${config.workspaceId}`).digest('hex').slice(0, 16);
  return join(base, 'was-client', `listen-${id}.json`);
}

function loadState(path: string, config: Config): ListenState | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const s = JSON.parse(text) as ListenState;
  if (s.workspaceId !== config.workspaceId) throw new UsageError(`${path} belongs to workspace ${s.workspaceId}; use another --state file`);
  return { ...s, forwarded: Array.isArray(s.forwarded) ? s.forwarded : [] };
}

function saveState(path: string, state: ListenState): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(state), { mode: 0o600 });
  renameSync(tmp, path);
}

/** The webhook body the service sends for an event: `{id, type, workspaceId, createdAt, data}`. */
export function webhookBody(e: ServiceEvent): string {
  return JSON.stringify({ id: e.id, type: e.type, workspaceId: e.workspaceId, createdAt: e.createdAt, data: e.data });
}

const PERMANENT = new Set([400, 401, 403, 404, 410]);

export async function listen(c: Context, config: Config, env: NodeJS.ProcessEnv): Promise<number> {
  const forwardTo = c.args.flag('forward-to');
  if (!forwardTo) throw new UsageError('listen needs --forward-to URL');
  try {
    new URL(forwardTo);
  } catch {
    throw new UsageError(`--forward-to is not a URL: ${forwardTo}`);
  }
  const types = c.args.list('types');
  const pollMs = c.args.int('poll-interval', 50, 60_000) ?? 1000;
  const timeoutMs = c.args.int('timeout', 100, 600_000) ?? 10_000;
  const statePath = c.args.flag('state') ?? defaultStatePath(config, env);
  let state = loadState(statePath, config);
  const resumed = state !== undefined;
  if (!state) {
    state = { serviceUrl: config.url, workspaceId: config.workspaceId, secret: c.args.flag('secret') ?? `whsec_${randomBytes(24).toString('hex')}`, cursor: undefined, forwarded: [] };
    if (!c.args.bool('from-start')) {
      // A first start forwards what happens from now on (like stripe listen): skip to the feed's end.
      for await (const page of c.client.events.pages({ limit: 100, signal: c.signal })) state.cursor = page.nextCursor;
      if (state.cursor === undefined) state.cursor = (await c.client.events.list({ limit: 1 }, { signal: c.signal })).nextCursor;
    }
    saveState(statePath, state);
  } else if (c.args.flag('secret') && c.args.flag('secret') !== state.secret) {
    state.secret = c.args.flag('secret')!;
    saveState(statePath, state);
  }
  const ready = { type: 'ready', secret: state.secret, forwardTo, state: statePath, resumed };
  c.print.line(ready, `> Ready! Forwarding ${types ? types.join(', ') : 'all'} events to ${forwardTo}\n> Your webhook signing secret is ${state.secret}\n> State ${statePath}${resumed ? ' (resumed)' : ''}`);

  const st = state;
  let idle = 0;
  while (!c.signal.aborted) {
    let page;
    try {
      page = await c.client.events.list({ limit: 100, ...(st.cursor ? { cursor: st.cursor } : {}), ...(types ? { types } : {}) }, { signal: c.signal });
    } catch (err) {
      if (c.signal.aborted) break;
      if (err instanceof ServiceError && err.status < 500 && err.status !== 429) throw err;
      c.print.note(`listen: reading events failed (${(err as Error).message}); retrying`);
      await sleep(backoffDelay(Math.min(idle++, 6), 500, 30_000), c.signal).catch(() => {});
      continue;
    }
    const done = new Set(st.forwarded);
    for (const event of page.items) {
      if (done.has(event.id)) continue;
      const finished = await forward(c, forwardTo, event, st.secret, timeoutMs);
      if (!finished) break; // stopping
      st.forwarded.push(event.id);
      saveState(statePath, st);
    }
    if (c.signal.aborted) break;
    if (page.items.every((e) => st.forwarded.includes(e.id))) {
      st.cursor = page.nextCursor;
      st.forwarded = [];
      saveState(statePath, st);
    }
    if (page.hasMore) {
      idle = 0;
      continue;
    }
    await sleep(page.items.length ? 0 : Math.min(5 * pollMs, pollMs * 1.25 ** idle++), c.signal).catch(() => {});
    if (page.items.length) idle = 0;
  }
  return EXIT.OK;
}

/**
 * POSTs one event until the receiver answers 2xx or a permanent status (400, 401, 403, 404, 410),
 * retrying network failures and other statuses with back-off. False when stopped before that.
 */
async function forward(c: Context, url: string, event: ServiceEvent, secret: string, timeoutMs: number): Promise<boolean> {
  const body = webhookBody(event);
  for (let attempt = 1; ; attempt++) {
    const started = performance.now();
    let status: number | undefined;
    let failure: string | undefined;
    try {
      // Not aborted by a stop: a request in flight finishes, so its result is recorded.
      const res = await fetch(url, {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'was-client-listen/1.0',
          'service-event-id': event.id,
          'service-signature': await signWebhook(body, secret),
        },
        body,
      });
      status = res.status;
      await res.arrayBuffer().catch(() => undefined);
    } catch (err) {
      failure = (err as Error).name === 'TimeoutError' ? 'timeout' : ((err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message);
    }
    const latencyMs = Math.round(performance.now() - started);
    const ok = status !== undefined && status >= 200 && status < 300;
    const permanent = status !== undefined && PERMANENT.has(status);
    c.print.line(
      { type: 'delivery', eventType: event.type, eventId: event.id, status: status ?? null, error: failure ?? null, latencyMs, attempt, outcome: ok ? 'delivered' : permanent ? 'refused' : 'retrying' },
      `${new Date().toISOString()}  --> ${event.type.padEnd(16)} ${event.id}${eventSubject(event)}  [${status ?? failure}] ${latencyMs} ms${attempt > 1 ? ` (attempt ${attempt})` : ''}${ok ? '' : permanent ? ' refused, not retried' : ' retrying'}`,
    );
    if (ok || permanent) return true;
    if (c.signal.aborted) return false;
    try {
      await sleep(backoffDelay(Math.min(attempt - 1, 8), 500, 30_000), c.signal);
    } catch {
      return false;
    }
  }
}
