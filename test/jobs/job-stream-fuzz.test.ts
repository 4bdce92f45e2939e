/**
 * Property tests of job streams (GET /v1/jobs/{id}/stream, decisions.md section 1 rows "SSE
 * payload", "SSE resume", "Job version"; docs/decisions.md "Job streams (SSE)"): random
 * Last-Event-ID and Accept headers, plans, tenants and job ids over a real socket, and sequences
 * of opened, dropped and finished streams against the plan's limit. The tenants use test keys
 * (simulated work, the test balance), so their slots are in their workspaces' test twins.
 *
 * ADMIN_FUZZ_RUNS (default 100) scales every property's number of runs (as in
 * test/admin/admin-fuzz.test.ts, with which these tests once shared a file).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { PLAN_DEFAULTS } from '../../src/modules/usage/plans.js';
import { admin, call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { scopeOf, seedTenant, type Tenant } from '../support/seed.js';
import { drain, getJob, run } from '../support/jobs.js';
import { baseUrl } from '../support/base-url.js';
import { apiHeaders, type Frame, frameReader, httpGet, slotCount, streamGet } from '../support/sse.js';
import { waitFor } from '../support/wait.js';
import { check } from '../support/fast-check.js';
import { assertEnvelope } from '../support/admin-state.js';
import { headerString, runs } from '../support/admin-requests.js';

// ---- job streams --------------------------------------------------------------------------------

const SPRITE = { prompt: 'a knight', frames: 3, frameWidth: 16, frameHeight: 16 };
const STREAM_LIMIT = PLAN_DEFAULTS.pro.streams;
/** Patience of the state waits below (each ends as soon as its state holds): a loaded machine's, not a stopwatch. */
const STATE_WAIT_MS = 30_000;

interface StreamWorld {
  pro: Tenant;
  other: Tenant;
  free: Tenant;
  starter: Tenant;
  /** Completed jobs of `pro`: with their whole history, with only the current version, with version 2 missing. */
  full: string;
  trimmed: string;
  holed: string;
  /** A completed job of `other`. */
  foreign: string;
}

async function queuedJob(ctx: TestContext, t: Tenant): Promise<{ jobId: string; version: number }> {
  const res = await run(ctx, t, 'sprite.generate', SPRITE);
  assert.equal(res.statusCode, 202, res.body);
  const data = res.json().data;
  return { jobId: data.jobId, version: (await getJob(ctx, t, data.jobId)).version };
}

async function buildStreamWorld(ctx: TestContext): Promise<StreamWorld> {
  const tenant = async (plan: 'free' | 'starter' | 'pro') => {
    const t = await seedTenant(ctx.deps, { plan, credits: 1_000_000_000, mode: 'test' });
    // Points and queue limits out of the way: the properties are about streams.
    const res = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { pointsPerMinute: 1e12, pointsPerMonth: 1e12, waitingJobs: 1e6, runningJobs: 1e6 } });
    assert.equal(res.statusCode, 200, res.body);
    return t;
  };
  const pro = await tenant('pro');
  const other = await tenant('pro');
  const free = await tenant('free');
  const starter = await tenant('starter');
  const full = (await queuedJob(ctx, pro)).jobId;
  const trimmed = (await queuedJob(ctx, pro)).jobId;
  const holed = (await queuedJob(ctx, pro)).jobId;
  const foreign = (await queuedJob(ctx, other)).jobId;
  await drain(ctx);
  for (const [t, id] of [[pro, full], [pro, trimmed], [pro, holed], [other, foreign]] as const) assert.equal((await getJob(ctx, t, id)).status, 'completed');
  const version = (await getJob(ctx, pro, trimmed)).version as number;
  assert.ok(version >= 4, `several versions (${version})`);
  await ctx.deps.db.deleteFrom('job_versions').where('job_id', '=', trimmed).where('version', '<', version).execute();
  await ctx.deps.db.deleteFrom('job_versions').where('job_id', '=', holed).where('version', '=', 2).execute();
  return { pro, other, free, starter, full, trimmed, holed, foreign };
}

/** A response that is no stream: the error envelope with its registered status (Retry-After on 429), or 204 without a body. */
async function assertRefusal(res: Response): Promise<{ code: string; details?: any }> {
  if (res.status === 204) {
    assert.equal(await res.text(), '');
    return { code: 'NO_CONTENT' };
  }
  const text = await res.text();
  const body = assertEnvelope({ statusCode: res.status, body: text, headers: { 'x-request-id': res.headers.get('x-request-id') ?? undefined } });
  if (res.status === 429) {
    assert.match(String(res.headers.get('retry-after')), /^[1-9]\d*$/, 'a 429 carries Retry-After in whole seconds');
    assert.equal(body.details.limit, 'STREAMS');
    assert.ok(['workspace', 'key'].includes(body.details.scope), body.details.scope);
    assert.equal(body.details.maximum, STREAM_LIMIT);
    assert.ok(Number.isFinite(Date.parse(body.details.resetsAt)));
  }
  return body;
}

// Accept headers: media ranges with qualities, judged as RFC 9110 section 12.5.1 says (the most
// specific range that matches text/event-stream decides; q=0 means "not this").
const ACCEPT_RANGES = ['text/event-stream', 'TEXT/Event-Stream', 'text/event-stream;charset=utf-8', 'text/*', 'Text/*', '*/*', 'application/json', 'text/html', 'application/*', 'text/plain'];
const ACCEPT_QS = [undefined, '0', '0.0', '0.000', '1', '1.0', '0.5', '0.001'];
type AcceptPlan = { header: string | undefined; accepts: boolean | 'unclear' };

function specificity(range: string): number {
  const type = range.split(';')[0]!.trim().toLowerCase();
  return type === 'text/event-stream' ? 2 : type === 'text/*' ? 1 : type === '*/*' ? 0 : -1;
}

const acceptArb: fc.Arbitrary<AcceptPlan> = fc.oneof(
  { weight: 20, arbitrary: fc.constant<AcceptPlan>({ header: 'text/event-stream', accepts: true }) },
  {
    weight: 6,
    arbitrary: fc.array(fc.tuple(fc.constantFrom(...ACCEPT_RANGES), fc.constantFrom(...ACCEPT_QS), fc.constantFrom(';', '; ', ' ;')), { minLength: 1, maxLength: 3 }).map((list): AcceptPlan => {
      const header = list.map(([r, q, sep]) => (q === undefined ? r : `${r}${sep}q=${q}`)).join(', ');
      const levels = list.map(([r, q]) => ({ level: specificity(r), q: q === undefined ? 1 : Number(q) })).filter((x) => x.level >= 0);
      if (levels.length === 0) return { header, accepts: false };
      const top = Math.max(...levels.map((x) => x.level));
      const qs = levels.filter((x) => x.level === top).map((x) => x.q > 0);
      return { header, accepts: qs.every(Boolean) ? true : qs.some(Boolean) ? 'unclear' : false };
    }),
  },
  { weight: 1, arbitrary: fc.constant<AcceptPlan>({ header: undefined, accepts: false }) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', ',', 'text/event-stream;q=abc', 'text/event-stream;q=-1', 'text/event-stream;q=1.5', 'text/event-streams', 'event-stream', 'text/event-stream/x').map((header): AcceptPlan => ({ header, accepts: 'unclear' })) },
  { weight: 1, arbitrary: headerString.map((h): AcceptPlan => ({ header: h, accepts: /event-stream|\*/i.test(h) ? 'unclear' : false })) },
);

/** Last-Event-ID: none, relative to the job's version, text of every kind, or several header lines. */
type LeidPlan = { kind: 'none' } | { kind: 'rel'; delta: number } | { kind: 'text'; text: string } | { kind: 'multi'; values: string[] };
const LEID_TEXTS = ['', ' ', ' 3 ', '03', '+3', '-1', '-0', '1.5', '1e3', '0x10', '0', '999999999999999', '9999999999999999', '99999999999999999999', 'abc', '3\t', 'null', 'Infinity', Buffer.from('３').toString('latin1'), Buffer.from('٣').toString('latin1'), 'é'];
const leidArb: fc.Arbitrary<LeidPlan> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<LeidPlan>({ kind: 'none' }) },
  { weight: 14, arbitrary: fc.integer({ min: -12, max: 6 }).map((delta): LeidPlan => ({ kind: 'rel', delta })) },
  { weight: 3, arbitrary: fc.constantFrom(...LEID_TEXTS).map((text): LeidPlan => ({ kind: 'text', text })) },
  { weight: 1, arbitrary: headerString.map((text): LeidPlan => ({ kind: 'text', text })) },
  { weight: 1, arbitrary: fc.array(fc.constantFrom('1', '2', '', 'x'), { minLength: 2, maxLength: 3 }).map((values): LeidPlan => ({ kind: 'multi', values })) },
);

/** The Last-Event-ID header lines to send, and the version the server must read from them (undefined: none; null: 400). */
function leidFor(plan: LeidPlan, version: number): { lines: string[] | undefined; after: number | undefined | null } {
  const lines = plan.kind === 'none' ? undefined : plan.kind === 'rel' ? [String(version + plan.delta)] : plan.kind === 'text' ? [plan.text] : plan.values;
  if (lines === undefined) return { lines, after: undefined };
  // Several lines reach the server as one value joined with ", "; HTTP strips the value's surrounding blanks.
  const value = lines.join(', ').trim();
  if (value === '') return { lines, after: undefined };
  return { lines, after: /^\d{1,15}$/.test(value) ? Number(value) : null };
}

const events = (frames: Frame[]) => frames.filter((f) => f.comment === undefined);

/**
 * What a stream of a finished job must send after Last-Event-ID `after`: every stored version
 * after it, in order, older ones with `output: {}`, the current one as the full snapshot; from
 * the first version missing from the history on, `event: gap` and the current snapshot.
 */
async function expectedFrames(ctx: TestContext, t: Tenant, jobId: string, after: number | undefined): Promise<{ event: string; id?: number; data: unknown }[]> {
  const current = await getJob(ctx, t, jobId);
  const version = current.version as number;
  if (after === undefined) return [{ event: 'job', id: version, data: current }];
  const gap = [{ event: 'gap', data: { jobId, lastEventId: after } }, { event: 'job', id: version, data: current }];
  if (after > version) return gap;
  const stored = new Map((await ctx.deps.db.selectFrom('job_versions').select(['version', 'snapshot_json']).where('job_id', '=', jobId).execute()).map((r) => [Number(r.version), JSON.parse(r.snapshot_json)]));
  const out: { event: string; id?: number; data: unknown }[] = [];
  for (let v = after + 1; v < version; v++) {
    if (!stored.has(v)) return [...out, ...gap];
    out.push({ event: 'job', id: v, data: { ...stored.get(v), output: {} } });
  }
  return [...out, { event: 'job', id: version, data: current }];
}

describeEachDatabase('job stream fuzz', (get) => {
  test(`stream rule: every open of a finished job is either refused before the stream starts with the registered error (400 Accept or Last-Event-ID, 403 PLAN_REQUIRED, 404 another tenant's or no job, 204 at the terminal version) or sends the snapshot, or the versions after Last-Event-ID (event: gap and the snapshot where the history is gone), ids growing by one, and closes (${runs(1.5)} runs)`, async (t) => {
    const ctx = get();
    const w = await buildStreamWorld(ctx);
    const base = await baseUrl(ctx);
    const stats: Record<string, number> = {};
    await check(
      fc.asyncProperty(
        fc.constantFrom('pro', 'pro', 'pro', 'pro', 'free', 'starter'),
        fc.constantFrom('full', 'full', 'trimmed', 'holed', 'foreign', 'unknown', 'malformed', 'upper'),
        leidArb,
        acceptArb,
        async (who, which, leidPlan, accept) => {
          const tenant = who === 'pro' ? w.pro : who === 'free' ? w.free : w.starter;
          const jobId =
            which === 'unknown' ? randomUUID() : which === 'malformed' ? `${w.full.slice(0, -1)}x` : which === 'upper' ? w.full.toUpperCase() : which === 'foreign' ? w.foreign : w[which as 'full' | 'trimmed' | 'holed'];
          const own = which === 'full' || which === 'trimmed' || which === 'holed' || which === 'upper';
          const version = own ? ((await getJob(ctx, w.pro, which === 'upper' ? w.full : jobId)).version as number) : 1;
          const { lines, after } = leidFor(leidPlan, version);
          const headers: Record<string, string | string[]> = { authorization: `Bearer ${tenant.secret}`, 'x-service-workspace': tenant.workspace.id };
          if (accept.header !== undefined) headers.accept = accept.header;
          if (lines !== undefined) headers['last-event-id'] = lines.length === 1 ? lines[0]! : lines;
          const res = await streamGet(`${base}/v1/jobs/${encodeURIComponent(jobId)}/stream`, headers).response;
          // The order of the checks (docs/decisions.md "Order of checks"): path, Accept and
          // Last-Event-ID (400), plan (403), job in the workspace (404), terminal resume (204).
          const afterAccept = async (): Promise<string> => {
            if (after === null) return 'INVALID_REQUEST';
            if (who !== 'pro') return 'PLAN_REQUIRED';
            if (which === 'upper') {
              // An id in another letter case names the job exactly when GET /v1/jobs/{id} says so.
              const read = await call(ctx, 'GET', `/v1/jobs/${jobId}`, { secret: w.pro.secret, workspaceId: w.pro.workspace.id });
              if (read.statusCode === 404) return 'NOT_FOUND';
            } else if (!own) return 'NOT_FOUND';
            return after === version ? 'NO_CONTENT' : 'STREAM';
          };
          const allowed =
            which === 'malformed' || accept.accepts === false ? ['INVALID_REQUEST'] : accept.accepts === 'unclear' ? ['INVALID_REQUEST', await afterAccept()] : [await afterAccept()];
          const what = `(Accept ${JSON.stringify(accept.header)}, Last-Event-ID ${JSON.stringify(lines)})`;
          if (res.status !== 200) {
            const { code } = await assertRefusal(res);
            stats[code] = (stats[code] ?? 0) + 1;
            assert.ok(allowed.includes(code), `expected ${allowed.join(' or ')}, got ${res.status} ${code} ${what}`);
            return;
          }
          stats.STREAM = (stats.STREAM ?? 0) + 1;
          assert.ok(allowed.includes('STREAM'), `expected ${allowed.join(' or ')}, got a stream ${what}`);
          assert.match(String(res.headers.get('content-type')), /^text\/event-stream/);
          const frames = events(await frameReader(res).rest(5_000));
          const want = await expectedFrames(ctx, w.pro, which === 'upper' ? w.full : jobId, after ?? undefined);
          assert.deepEqual(
            frames.map((f) => ({ event: f.event, ...(f.id !== undefined ? { id: Number(f.id) } : {}), data: JSON.parse(f.data!) })),
            want,
            `frames after Last-Event-ID ${JSON.stringify(lines)}`,
          );
          let previous: number | undefined;
          for (const f of frames) {
            if (f.event === 'gap') previous = undefined;
            else {
              if (previous !== undefined) assert.equal(Number(f.id), previous + 1, 'ids grow by one');
              previous = Number(f.id);
            }
          }
        },
      ),
      { numRuns: runs(1.5) },
    );
    t.diagnostic(`outcomes: ${JSON.stringify(stats)}`);
    assert.ok((stats.STREAM ?? 0) > 0 && (stats.INVALID_REQUEST ?? 0) > 0, JSON.stringify(stats));
    await waitFor('no slot left', async () => (await slotCount(ctx, scopeOf(w.pro))) === 0, STATE_WAIT_MS);
  });

  test(`stream rule: live streams send every change once and in order and close after the terminal status; beyond the plan's ${STREAM_LIMIT} concurrent streams an open is 429 CONCURRENCY_LIMITED with Retry-After; no slot stays taken after a client disconnects (also while its stream is being set up), so new streams within the limit open (${runs(0.2, 4)} runs)`, async (t) => {
    const ctx = get();
    const w = await buildStreamWorld(ctx);
    const base = await baseUrl(ctx);
    const stats: Record<string, number> = {};
    const count = (k: string) => (stats[k] = (stats[k] ?? 0) + 1);
    const sse = (extra: Record<string, string> = {}) => apiHeaders(w.pro, { accept: 'text/event-stream', ...extra });
    const settled = (held: number, what: string) => waitFor(`${what}: the slots are those of the ${held} streams still held`, async () => (await slotCount(ctx, scopeOf(w.pro))) === held, STATE_WAIT_MS);

    type Action =
      | { a: 'open'; job: number; leid: 'none' | 'current' | 'previous' }
      | { a: 'drop'; which: number }
      | { a: 'abort'; job: number; delayMs: number }
      | { a: 'finish'; job: number; how: 'cancel' | 'drain' };
    const action: fc.Arbitrary<Action> = fc.oneof(
      { weight: 7, arbitrary: fc.record({ a: fc.constant<'open'>('open'), job: fc.nat(1), leid: fc.constantFrom<'none' | 'current' | 'previous'>('none', 'none', 'current', 'previous') }) },
      { weight: 2, arbitrary: fc.record({ a: fc.constant<'drop'>('drop'), which: fc.nat() }) },
      { weight: 2, arbitrary: fc.record({ a: fc.constant<'abort'>('abort'), job: fc.nat(1), delayMs: fc.integer({ min: 0, max: 25 }) }) },
      { weight: 1, arbitrary: fc.record({ a: fc.constant<'finish'>('finish'), job: fc.nat(1), how: fc.constantFrom<'cancel' | 'drain'>('cancel', 'cancel', 'drain') }) },
    );

    interface Held {
      job: number;
      reader: ReturnType<typeof frameReader>;
      /** The last id received, or the Last-Event-ID sent when nothing came yet. */
      last: number;
    }

    /** A stream that ended on its own: the rest of its frames are the versions after `last` up to the terminal one, then the end. */
    async function assertFinished(h: Held, jobId: string): Promise<void> {
      const frames = events(await h.reader.rest(5_000));
      const final = await getJob(ctx, w.pro, jobId);
      assert.ok(['completed', 'failed', 'cancelled'].includes(final.status), final.status);
      assert.deepEqual(
        frames.map((f) => [f.event, Number(f.id)]),
        Array.from({ length: final.version - h.last }, (_, i) => ['job', h.last + 1 + i]),
        `every version after ${h.last} once, in order, up to the terminal ${final.version}`,
      );
      assert.deepEqual(JSON.parse(frames.at(-1)!.data!), final, 'the terminal event is the full snapshot');
    }

    // The first failure, kept: once a run fails, its streams may outlive it and the shrunk
    // cases fail on that instead.
    let firstFailure: Error | undefined;
    await check(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 9 }), async (actions) => {
        const jobs = [await queuedJob(ctx, w.pro), await queuedJob(ctx, w.pro)];
        const finished = new Set<number>();
        const held: Held[] = [];
        try {
          await settled(0, 'start');
          for (const act of actions) {
            if (act.a === 'open') {
              const job = jobs[act.job]!;
              const version = finished.has(act.job) ? (await getJob(ctx, w.pro, job.jobId)).version : job.version;
              const leid = act.leid === 'none' ? undefined : act.leid === 'current' ? version : version - 1;
              const res = await httpGet(`${base}/v1/jobs/${job.jobId}/stream`, sse(leid === undefined ? {} : { 'last-event-id': String(leid) }));
              // Resuming at the terminal version is answered before any slot is weighed: nothing
              // more will come, so it takes no slot and is 204 even when every slot is taken.
              if (finished.has(act.job) && leid === version) {
                assert.equal((await assertRefusal(res)).code, 'NO_CONTENT', 'resuming at the terminal version is 204');
                continue;
              }
              if (held.length >= STREAM_LIMIT) {
                const refusal = await assertRefusal(res);
                assert.equal(refusal.code, 'CONCURRENCY_LIMITED', `open number ${held.length + 1}: ${res.status}`);
                count('429');
                continue;
              }
              assert.equal(res.status, 200, `open number ${held.length + 1} of ${STREAM_LIMIT} allowed: ${res.status} ${res.status === 200 ? '' : await res.text()}`);
              count('open');
              const h: Held = { job: act.job, reader: frameReader(res), last: leid ?? version - 1 };
              if (finished.has(act.job)) {
                // A finished job: what is missing, then the end of the stream (and its slot).
                await assertFinished(h, job.jobId);
                await settled(held.length, 'a finished stream');
                continue;
              }
              if (leid !== version) {
                const first = await h.reader.next(5_000);
                assert.deepEqual([first?.event, Number(first?.id)], ['job', version], 'the current snapshot first (or the version after Last-Event-ID)');
                assert.deepEqual(JSON.parse(first!.data!), await getJob(ctx, w.pro, job.jobId));
                h.last = version;
              }
              held.push(h);
            } else if (act.a === 'drop') {
              if (held.length === 0) continue;
              const [h] = held.splice(act.which % held.length, 1);
              await h!.reader.cancel();
              count('drop');
              await settled(held.length, 'a dropped stream');
            } else if (act.a === 'abort') {
              // The client gives up before or while the server sets the stream up.
              const job = jobs[act.job]!;
              const { response, request } = streamGet(`${base}/v1/jobs/${job.jobId}/stream`, sse({ 'last-event-id': String(job.version) }));
              response.catch(() => {});
              await new Promise((r) => setTimeout(r, act.delayMs));
              request.destroy();
              count('abort');
              // Let the server finish with the request, so a slot it leaves is seen in this run.
              await new Promise((r) => setTimeout(r, 100));
              await settled(held.length, `a request given up after ${act.delayMs} ms`);
            } else {
              const targets = act.how === 'drain' ? [0, 1] : [act.job];
              if (act.how === 'drain') await drain(ctx);
              else if (!finished.has(act.job)) {
                const res = await call(ctx, 'POST', `/v1/jobs/${jobs[act.job]!.jobId}/cancel`, { secret: w.pro.secret, workspaceId: w.pro.workspace.id });
                assert.equal(res.statusCode, 200, res.body);
              }
              for (const j of targets) finished.add(j);
              for (const h of held.filter((x) => targets.includes(x.job))) {
                await assertFinished(h, jobs[h.job]!.jobId);
                held.splice(held.indexOf(h), 1);
              }
              count('finish');
              await settled(held.length, 'streams of finished jobs');
            }
          }
          // The end of the run: streams of cancelled jobs close, and then the plan's limit opens again.
          for (const [i, job] of jobs.entries()) {
            if (!finished.has(i)) assert.equal((await call(ctx, 'POST', `/v1/jobs/${job.jobId}/cancel`, { secret: w.pro.secret, workspaceId: w.pro.workspace.id })).statusCode, 200);
          }
          for (const h of held) await assertFinished(h, jobs[h.job]!.jobId);
          await settled(0, 'every stream ended');
          const fresh = await queuedJob(ctx, w.pro);
          const readers = [];
          for (let i = 0; i < STREAM_LIMIT; i++) {
            const res = await httpGet(`${base}/v1/jobs/${fresh.jobId}/stream`, sse());
            assert.equal(res.status, 200, `stream ${i + 1} of ${STREAM_LIMIT} opens once the others are gone`);
            const reader = frameReader(res);
            assert.equal((await reader.next(5_000))?.event, 'job');
            readers.push(reader);
          }
          assert.equal((await assertRefusal(await httpGet(`${base}/v1/jobs/${fresh.jobId}/stream`, sse()))).code, 'CONCURRENCY_LIMITED');
          for (const r of readers) await r.cancel();
          await call(ctx, 'POST', `/v1/jobs/${fresh.jobId}/cancel`, { secret: w.pro.secret, workspaceId: w.pro.workspace.id });
          await settled(0, 'the end of the run');
        } catch (err) {
          const slots = await ctx.deps.db.selectFrom('stream_slots').selectAll().where('workspace_id', '=', scopeOf(w.pro)).execute();
          firstFailure ??= new Error(`${(err as Error).message}\nactions: ${JSON.stringify(actions)}\nslots then: ${JSON.stringify(slots)}`);
          for (const h of held) await h.reader.cancel().catch(() => {});
          throw err;
        }
      }),
      { numRuns: runs(0.2, 4) },
    ).catch((err: Error) => {
      if (firstFailure) err.message += `\nFirst failure: ${firstFailure.message}`;
      throw err;
    });
    t.diagnostic(`actions: ${JSON.stringify(stats)}`);
  });

  test(`stream rule: a client that gives up while its open waits on the database (auth, the job read, the slot's transaction) leaves no slot behind (${runs(0.08, 3)} runs)`, async () => {
    const ctx = get();
    const w = await buildStreamWorld(ctx);
    const base = await baseUrl(ctx);
    await check(
      fc.asyncProperty(fc.integer({ min: 0, max: 120 }), fc.integer({ min: 10, max: 150 }), fc.constantFrom('current', 'none'), async (giveUpMs, holdMoreMs, leid) => {
        const job = await queuedJob(ctx, w.pro);
        // A transaction held open makes the open wait on the database, as under load.
        let release!: () => void;
        const busy = ctx.deps.db.transaction().execute(async (trx) => {
          await trx.selectFrom('workspaces').select('id').where('id', '=', scopeOf(w.pro)).execute();
          await new Promise<void>((r) => (release = r));
        });
        await new Promise((r) => setTimeout(r, 10));
        const headers = apiHeaders(w.pro, { accept: 'text/event-stream', ...(leid === 'current' ? { 'last-event-id': String(job.version) } : {}) });
        const { response, request } = streamGet(`${base}/v1/jobs/${job.jobId}/stream`, headers);
        response.catch(() => {});
        await new Promise((r) => setTimeout(r, giveUpMs));
        request.destroy();
        await new Promise((r) => setTimeout(r, holdMoreMs));
        release();
        await busy;
        // Well before the 15 s keep-alive that would notice the dead connection.
        await new Promise((r) => setTimeout(r, 200));
        await waitFor('no slot of the abandoned open', async () => (await slotCount(ctx, scopeOf(w.pro))) === 0, STATE_WAIT_MS);
        const res = await call(ctx, 'POST', `/v1/jobs/${job.jobId}/cancel`, { secret: w.pro.secret, workspaceId: w.pro.workspace.id });
        assert.equal(res.statusCode, 200, res.body);
      }),
      { numRuns: runs(0.08, 3) },
    );
  });
}, testKeySuite());
