/**
 * The service against the contract's own tables (test/support/contract-oracle.ts, written from
 * public-api-v1.md and decisions.md, not from src/): the fourteen operation names by value, the
 * input schemas GET /v1/tools serves, what estimates and runs accept at each bound of decisions.md
 * section 2 and one step past it, the defaults a run is stored with, the plan defaults of the
 * spec's Limits table (served and enforced) and the 24-hour Idempotency-Key window. The tenants
 * use test keys (every operation on the simulated provider, paid from the test balance).
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { admin, call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { scopeOf, seedTenant, type Tenant } from '../support/seed.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { balance, run } from '../support/jobs.js';
import { assertError } from '../support/assertions.js';
import { glb, mp4, png, upload, wav } from '../support/media.js';
import {
  SPEC_IDEMPOTENCY_WINDOW_MS,
  SPEC_INPUTS,
  SPEC_OPERATION_IDS,
  SPEC_PLAN_DEFAULTS,
  SPEC_SYNCHRONOUS,
  type SpecField,
  type SpecMediaKind,
  type SpecOperationId,
  type SpecPlan,
} from '../support/contract-oracle.js';
import { OPERATION_IDS } from '../../src/operations/ids.js';
import { claimJobs } from '../../src/worker/job-claim.js';
import { checkRefusals } from '../support/openapi-responses.js';

type Input = Record<string, unknown>;

const VERIFIED_HOST = 'contract-scan.example.com';

interface Fixture {
  t: Tenant;
  media: Record<SpecMediaKind, string[]>;
  served: Map<string, { asynchronous: boolean; inputSchema: Record<string, any>; usagePoints: number }>;
}

async function setUp(ctx: TestContext): Promise<Fixture> {
  const t = await seedTenant(ctx.deps, { plan: 'pro', credits: 1_000_000_000_000, mode: 'test' });
  const limits = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { pointsPerMinute: 1_000_000_000, pointsPerMonth: 1_000_000_000_000 } });
  assert.equal(limits.statusCode, 200, limits.body);
  const put = async (bytes: Buffer, type: string) => {
    const res = await upload(ctx, t, bytes, { type, filename: 'f' });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data.id as string;
  };
  // Distinct files (lists of media ids are sets): 11 images for headshot's 10 + 1, 6 audio for voice.clone's 5 + 1.
  const media: Record<SpecMediaKind, string[]> = { image: [], audio: [], video: [], model: [] };
  for (let i = 0; i < 11; i++) media.image.push(await put(await png(16 + i, 16), 'image/png'));
  for (let i = 0; i < 6; i++) media.audio.push(await put(wav(4000 + 10 * i), 'audio/wav'));
  media.video.push(await put(mp4(), 'video/mp4'));
  media.model.push(await put(glb(), 'model/gltf-binary'));
  assert.equal((await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/domains`, { hostname: VERIFIED_HOST })).statusCode, 200);
  assert.equal((await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/domains/${VERIFIED_HOST}/verify`, { method: 'operator' })).statusCode, 200);
  const tools = await call(ctx, 'GET', '/v1/tools', { secret: t.secret, workspaceId: t.workspace.id });
  assert.equal(tools.statusCode, 200, tools.body);
  const served = new Map<string, { asynchronous: boolean; inputSchema: Record<string, any>; usagePoints: number }>();
  for (const tool of tools.json().data.items) for (const o of tool.operations) served.set(o.operationId, o);
  return { t, media, served };
}

/** The smallest input of each operation the contract accepts. */
function baseInput(f: Fixture, op: SpecOperationId): Input {
  switch (op) {
    case 'link.preview':
      // A loopback address: refused by the egress guard at run time, never a connection.
      return { url: 'http://127.0.0.1/' };
    case 'chat.generate':
      return { messages: [{ role: 'user', content: 'hi [sim:delay=0]' }] };
    case 'speech.generate':
      return { text: 'hello' };
    case 'headshot.generate':
      return { referenceMediaIds: [f.media.image[0]] };
    case 'background.remove':
      return { mediaId: f.media.image[0] };
    case 'video.edit':
      return { mediaId: f.media.video[0], prompt: 'shorter' };
    case 'three-d.rig':
      return { mediaId: f.media.model[0] };
    case 'voice.clone':
      return { referenceMediaIds: [f.media.audio[0]], name: 'Voice' };
    case 'security.scan':
      return { url: `https://${VERIFIED_HOST}/` };
    default:
      return { prompt: 'a prompt' };
  }
}

const OTHER_KIND: Record<SpecMediaKind, SpecMediaKind> = { image: 'audio', audio: 'image', video: 'image', model: 'image' };

interface BoundCase {
  what: string;
  input: Input;
  accept: boolean;
  /** Where INVALID_INPUT must point (a prefix of a JSON pointer). */
  pointer?: string;
}

/** Each bound of `field` and one step past it, from the oracle's description of the field. */
function fieldCases(f: Fixture, op: SpecOperationId, name: string, field: SpecField): BoundCase[] {
  const base = baseInput(f, op);
  const at = (what: string, value: unknown, accept: boolean): BoundCase => ({ what: `${name} ${what}`, input: { ...base, [name]: value }, accept, ...(accept ? {} : { pointer: `/input/${name}` }) });
  switch (field.kind) {
    case 'text': {
      const cases = [at(`of ${field.min} characters (the minimum)`, 'a'.repeat(field.min), true)];
      if (field.min > 0) cases.push(at(`of ${field.min - 1} characters`, 'a'.repeat(field.min - 1), false));
      if (field.max !== undefined) {
        cases.push(at(`of ${field.max} characters (the maximum)`, 'a'.repeat(field.max), true));
        // Characters, not UTF-16 code units: an astral character is one character.
        cases.push(at(`of ${field.max} astral characters (the maximum)`, '😀'.repeat(field.max), true));
        cases.push(at(`of ${field.max + 1} characters`, 'a'.repeat(field.max + 1), false));
      }
      return cases;
    }
    case 'integer':
      return [
        at(`= ${field.min} (the minimum)`, field.min, true),
        at(`= ${field.max} (the maximum)`, field.max, true),
        at(`= ${field.min - 1}`, field.min - 1, false),
        at(`= ${field.max + 1}`, field.max + 1, false),
        at(`= ${field.min + 0.5} (not an integer)`, field.min + 0.5, false),
      ];
    case 'number':
      return [at(`= ${field.min}`, field.min, true), at(`= ${field.max}`, field.max, true), at(`= ${field.min - 0.01}`, field.min - 0.01, false), at(`= ${field.max + 0.01}`, field.max + 0.01, false)];
    case 'enum':
      return [...field.values.map((v) => at(`= ${v}`, v, true)), at('= a value not listed', 'ogg', false), at('in another case', field.values[0]!.toUpperCase() === field.values[0] ? `${field.values[0]}x` : field.values[0]!.toUpperCase(), false)];
    case 'url': {
      const host = op === 'security.scan' ? VERIFIED_HOST : '127.0.0.1';
      const cases = field.schemes.map((s) => at(`with scheme ${s}`, `${s}://${host}/`, true));
      for (const s of ['http', 'https', 'ftp', 'file'].filter((x) => !(field.schemes as string[]).includes(x))) cases.push(at(`with scheme ${s}`, `${s}://${host}/`, false));
      return cases;
    }
    case 'media':
      return [at(`naming ${field.media} media`, f.media[field.media][0], true), at(`naming ${OTHER_KIND[field.media]} media`, f.media[OTHER_KIND[field.media]][0], false), at('naming no media', randomUUID(), false)];
    case 'mediaList': {
      const ids = f.media[field.media];
      const cases = [at(`with another kind of media`, [f.media[OTHER_KIND[field.media]][0]], false)];
      const min = field.min ?? 0;
      if (field.min !== undefined) cases.push(at(`of ${min} items (the minimum)`, ids.slice(0, min), true), at(`of ${min - 1} items`, ids.slice(0, min - 1), false));
      if (field.max !== undefined) {
        assert.ok(ids.length > field.max, 'enough distinct media for one past the maximum');
        cases.push(at(`of ${field.max} items (the maximum)`, ids.slice(0, field.max), true), at(`of ${field.max + 1} items`, ids.slice(0, field.max + 1), false));
      }
      return cases;
    }
    case 'messages': {
      const msgs = (n: number) => Array.from({ length: n }, (_, i) => ({ role: field.roles[i % field.roles.length], content: `message ${i} [sim:delay=0]` }));
      return [
        at(`: ${field.min} (the minimum)`, msgs(field.min), true),
        at(`: ${field.max} (the maximum)`, msgs(field.max), true),
        at(`: ${field.min - 1}`, msgs(field.min - 1), false),
        at(`: ${field.max + 1}`, msgs(field.max + 1), false),
        ...field.roles.map((role) => at(`with role ${role}`, [{ role, content: 'x [sim:delay=0]' }], true)),
        at('with role tool', [{ role: 'tool', content: 'x' }], false),
      ];
    }
    case 'edits':
    case 'any':
      return [];
  }
}

/** Required fields and groups: an input without one is refused; each member of a group alone is enough. */
function requiredCases(f: Fixture, op: SpecOperationId): BoundCase[] {
  const spec = SPEC_INPUTS[op];
  const base = baseInput(f, op);
  const cases: BoundCase[] = [];
  for (const name of spec.required) {
    const { [name]: _dropped, ...rest } = base;
    cases.push({ what: `without ${name}`, input: rest, accept: false, pointer: '/input' });
  }
  for (const group of spec.oneOf ?? []) {
    const without = Object.fromEntries(Object.entries(base).filter(([k]) => !group.includes(k)));
    cases.push({ what: `without any of ${group.join(', ')}`, input: without, accept: false, pointer: '/input' });
    for (const name of group) {
      const value = name === 'prompt' ? 'a prompt' : name === 'edits' ? [{ type: 'mute' }] : [f.media.image[0]];
      cases.push({ what: `with ${name} alone of ${group.join(', ')}`, input: { ...without, [name]: value }, accept: true });
    }
  }
  cases.push({ what: 'with a property the contract does not name', input: { ...base, filePath: '/etc/passwd' }, accept: false, pointer: '/input' });
  return cases;
}

async function jobCount(ctx: TestContext, workspaceId: string): Promise<number> {
  const row = await ctx.deps.db.selectFrom('jobs').select((eb) => eb.fn.countAll<number>().as('n')).where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
  return Number(row.n);
}

function assertInvalidInput(res: LightMyRequestResponse, pointer: string, what: string): void {
  assert.equal(res.statusCode, 400, `${what}: expected 400 INVALID_INPUT, got ${res.statusCode} ${res.body.slice(0, 400)}`);
  const body = res.json();
  assert.equal(body.code, 'INVALID_INPUT', `${what}: ${res.body.slice(0, 400)}`);
  const errors = body.details?.errors as { pointer: string }[] | undefined;
  assert.ok(Array.isArray(errors) && errors.some((e) => e.pointer.startsWith(pointer)), `${what}: an error points into ${pointer}: ${res.body.slice(0, 400)}`);
}

describeEachDatabase('the contract: operations, inputs, bounds, defaults, plan table and Idempotency-Key window', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  let f: Fixture;
  before(async () => {
    f = await setUp(get());
  });

  test('the fourteen operation names of the spec, by value: the code, GET /v1/tools, and which are synchronous', () => {
    assert.deepEqual([...OPERATION_IDS].sort(), [...SPEC_OPERATION_IDS].sort(), 'the code names exactly the spec operations');
    assert.deepEqual([...f.served.keys()].sort(), [...SPEC_OPERATION_IDS].sort(), 'GET /v1/tools serves exactly the spec operations');
    for (const op of SPEC_OPERATION_IDS) assert.equal(f.served.get(op)!.asynchronous, !SPEC_SYNCHRONOUS.has(op), `${op}: asynchronous`);
  });

  test('GET /v1/tools serves each operation an object schema holding the core fields of decisions.md section 2 with their bounds, defaults and required set', () => {
    for (const op of SPEC_OPERATION_IDS) {
      const spec = SPEC_INPUTS[op];
      const s = f.served.get(op)!.inputSchema;
      const where = (field: string) => `${op}.${field}: ${JSON.stringify(s.properties?.[field])}`;
      assert.equal(s.type, 'object', op);
      assert.equal(s.additionalProperties, false, `${op}: every schema forbids other properties`);
      assert.deepEqual([...(s.required ?? [])].sort(), [...spec.required].sort(), `${op}: required fields`);
      for (const [name, field] of Object.entries(spec.fields)) {
        const p = s.properties?.[name];
        assert.ok(p, `${op}: serves ${name}`);
        switch (field.kind) {
          case 'text':
            assert.equal(p.type, 'string', where(name));
            assert.equal(p.minLength, field.min, where(name));
            if (field.max !== undefined) assert.equal(p.maxLength, field.max, where(name));
            break;
          case 'integer':
            assert.equal(p.type, 'integer', where(name));
            assert.deepEqual([p.minimum, p.maximum], [field.min, field.max], where(name));
            if (field.default !== undefined) assert.equal(p.default, field.default, where(name));
            break;
          case 'number':
            assert.ok(p.type === 'number', where(name));
            assert.deepEqual([p.minimum, p.maximum], [field.min, field.max], where(name));
            break;
          case 'enum':
            assert.deepEqual([...p.enum].sort(), [...field.values].sort(), where(name));
            if (field.default !== undefined) assert.equal(p.default, field.default, where(name));
            break;
          case 'url':
            assert.equal(p.type, 'string', where(name));
            break;
          case 'media':
            assert.deepEqual([p.type, p.format], ['string', 'uuid'], where(name));
            break;
          case 'mediaList':
            assert.equal(p.type, 'array', where(name));
            assert.deepEqual([p.items?.type, p.items?.format], ['string', 'uuid'], where(name));
            if (field.min !== undefined) assert.equal(p.minItems, field.min, where(name));
            if (field.max !== undefined) assert.equal(p.maxItems, field.max, where(name));
            break;
          case 'messages':
            assert.equal(p.type, 'array', where(name));
            assert.deepEqual([p.minItems, p.maxItems], [field.min, field.max], where(name));
            assert.deepEqual([...p.items.properties.role.enum].sort(), [...field.roles].sort(), where(name));
            assert.deepEqual([...p.items.required].sort(), ['content', 'role'], where(name));
            break;
          case 'edits': {
            assert.equal(p.type, 'array', where(name));
            const branches: any[] = Array.isArray(p.items?.oneOf) ? p.items.oneOf : Array.isArray(p.items?.anyOf) ? p.items.anyOf : [p.items];
            const types = new Set(branches.flatMap((b) => (b?.properties?.type?.const !== undefined ? [b.properties.type.const] : (b?.properties?.type?.enum ?? []))));
            for (const step of field.steps) assert.ok(types.has(step), `${op}.${name}: a ${step} step (${[...types].join(', ')})`);
            break;
          }
          case 'any':
            break;
        }
      }
    }
  });

  for (const op of SPEC_OPERATION_IDS) {
    test(`${op}: estimates and runs accept each bound of decisions.md section 2 and refuse one past it (400 INVALID_INPUT with a pointer, nothing written)`, async () => {
      const ctx = get();
      const spec = SPEC_INPUTS[op];
      const cases = [
        { what: 'the smallest input', input: baseInput(f, op), accept: true } as BoundCase,
        ...Object.entries(spec.fields).flatMap(([name, field]) => fieldCases(f, op, name, field)),
        ...requiredCases(f, op),
      ];
      for (const c of cases) {
        const what = `${op} ${c.what}`;
        const body = { operationId: op, input: c.input };
        const est = await call(ctx, 'POST', '/v1/estimates', { secret: f.t.secret, workspaceId: f.t.workspace.id, body });
        const jobsBefore = await jobCount(ctx, scopeOf(f.t));
        const res = await run(ctx, f.t, op, c.input);
        if (!c.accept) {
          assertInvalidInput(est, c.pointer!, `estimate ${what}`);
          assertInvalidInput(res, c.pointer!, `run ${what}`);
          assert.equal(await jobCount(ctx, scopeOf(f.t)), jobsBefore, `run ${what}: a refused run writes no job`);
          continue;
        }
        assert.equal(est.statusCode, 200, `estimate ${what}: ${est.body.slice(0, 400)}`);
        if (SPEC_SYNCHRONOUS.has(op)) {
          assert.equal(res.statusCode, 200, `run ${what}: ${res.body.slice(0, 400)}`);
          assert.equal(res.json().data.kind, 'result', what);
        } else {
          assert.equal(res.statusCode, 202, `run ${what}: ${res.body.slice(0, 400)}`);
          const data = res.json().data;
          assert.deepEqual([data.kind, data.status, data.maximumCostMillicents], ['job', 'pending', est.json().data.maximumCostMillicents], `run ${what}: the estimate's maximum is reserved`);
          // Admission is what is checked here: the job is cancelled again, its hold released.
          const cancel = await call(ctx, 'POST', `/v1/jobs/${data.jobId}/cancel`, { secret: f.t.secret, workspaceId: f.t.workspace.id });
          assert.equal(cancel.statusCode, 200, cancel.body);
        }
      }
      assert.equal((await balance(ctx, f.t)).reservedMillicents, 0);
      await assertLedgerInvariants(ctx.deps, scopeOf(f.t));
    });
  }

  test('defaults of decisions.md section 2: a run without the field is stored with the default and costs what the default costs', async () => {
    const ctx = get();
    for (const op of SPEC_OPERATION_IDS) {
      for (const [name, field] of Object.entries(SPEC_INPUTS[op].fields)) {
        if (!('default' in field) || field.default === undefined) continue;
        const base = baseInput(f, op);
        const implicit = await call(ctx, 'POST', '/v1/estimates', { secret: f.t.secret, workspaceId: f.t.workspace.id, body: { operationId: op, input: base } });
        const explicit = await call(ctx, 'POST', '/v1/estimates', { secret: f.t.secret, workspaceId: f.t.workspace.id, body: { operationId: op, input: { ...base, [name]: field.default } } });
        assert.equal(implicit.statusCode, 200, implicit.body);
        assert.deepEqual(implicit.json().data, explicit.json().data, `${op}: no ${name} prices like ${name} = ${field.default}`);
        const res = await run(ctx, f.t, op, base);
        assert.ok(res.statusCode === 200 || res.statusCode === 202, res.body);
        const jobId = res.json().data.jobId as string;
        const row = await ctx.deps.db.selectFrom('jobs').select('input_json').where('id', '=', jobId).executeTakeFirstOrThrow();
        assert.equal(JSON.parse(row.input_json)[name], field.default, `${op}: stored with ${name} = ${field.default}`);
        if (res.statusCode === 202) assert.equal((await call(ctx, 'POST', `/v1/jobs/${jobId}/cancel`, { secret: f.t.secret, workspaceId: f.t.workspace.id })).statusCode, 200);
      }
    }
    await assertLedgerInvariants(ctx.deps, scopeOf(f.t));
  });

  test('security.scan of a hostname the workspace has not verified, or of an IP literal, is 400 DOMAIN_NOT_VERIFIED and writes nothing', async () => {
    const ctx = get();
    for (const url of ['https://unverified.example.com/', `https://www.${VERIFIED_HOST}/`, 'https://93.184.216.34/', 'https://[2606:2800:220:1::248]/']) {
      const before = await jobCount(ctx, scopeOf(f.t));
      assertError(await run(ctx, f.t, 'security.scan', { url }), 400, 'DOMAIN_NOT_VERIFIED');
      assert.equal(await jobCount(ctx, scopeOf(f.t)), before, url);
    }
    await assertLedgerInvariants(ctx.deps, scopeOf(f.t));
  });

  // Plan defaults and the Idempotency-Key window (tenants of their own).
  const MUSIC = { prompt: 'tune [sim:delay=0]', durationSeconds: 5 };

  async function tenantOn(ctx: TestContext, plan: SpecPlan): Promise<Tenant> {
    return seedTenant(ctx.deps, { plan, credits: 1_000_000_000, mode: 'test' });
  }

  test('every cell of the plan table is what GET /v1/usage and GET /v1/queue serve for a workspace of that plan', async () => {
    const ctx = get();
    for (const plan of Object.keys(SPEC_PLAN_DEFAULTS) as SpecPlan[]) {
      const cells = SPEC_PLAN_DEFAULTS[plan];
      const t = await tenantOn(ctx, plan);
      const usage = await call(ctx, 'GET', '/v1/usage', { secret: t.secret, workspaceId: t.workspace.id });
      assert.equal(usage.statusCode, 200, usage.body);
      const u = usage.json().data;
      assert.deepEqual([u.plan, u.points.minuteLimit, u.points.monthlyLimit, u.streams.maximum, u.streams.enabled], [plan, cells.pointsPerMinute, cells.pointsPerMonth, cells.streams, cells.streams > 0], `${plan}: usage`);
      const queue = await call(ctx, 'GET', '/v1/queue', { secret: t.secret, workspaceId: t.workspace.id });
      assert.equal(queue.statusCode, 200, queue.body);
      assert.deepEqual([queue.json().data.runningLimit, queue.json().data.waitingLimit], [cells.runningJobs, cells.waitingJobs], `${plan}: queue limits`);
    }
  });

  test('running jobs: a claim starts at most the plan\'s running jobs of a workspace (free 1, starter 3, pro 6)', async () => {
    const ctx = get();
    for (const plan of ['free', 'starter', 'pro'] as const) {
      const t = await tenantOn(ctx, plan);
      const n = SPEC_PLAN_DEFAULTS[plan].runningJobs;
      const queued = Math.min(n + 2, SPEC_PLAN_DEFAULTS[plan].waitingJobs);
      const ids: string[] = [];
      for (let i = 0; i < queued; i++) {
        const res = await run(ctx, t, 'music.generate', MUSIC);
        assert.equal(res.statusCode, 202, res.body);
        ids.push(res.json().data.jobId);
      }
      const claimed = await claimJobs(ctx.deps, `contract-${plan}`, 100);
      assert.equal(claimed.filter((j) => j.workspace_id === scopeOf(t)).length, n, `${plan}: ${n} running`);
      // Leave nothing running behind: cancel every job (a processing one is fenced out).
      for (const id of ids) assert.equal((await call(ctx, 'POST', `/v1/jobs/${id}/cancel`, { secret: t.secret, workspaceId: t.workspace.id })).statusCode, 200);
      for (const j of claimed.filter((j) => j.workspace_id !== scopeOf(t))) assert.fail(`claimed a job of another workspace: ${j.id}`);
      assert.equal((await balance(ctx, t)).reservedMillicents, 0);
      await assertLedgerInvariants(ctx.deps, scopeOf(t));
    }
  });

  test('active keys: a workspace holds exactly its plan\'s active keys (free 5, starter 20, pro 50); the next is 409 ACTIVE_KEY_LIMIT', async () => {
    const ctx = get();
    for (const plan of ['free', 'starter', 'pro'] as const) {
      const t = await tenantOn(ctx, plan);
      const n = SPEC_PLAN_DEFAULTS[plan].activeKeys;
      const body = { userId: t.user.id, workspaceIds: [t.workspace.id], scopes: ['usage:read'], operations: ['link.preview'], transports: ['rest'] };
      // The tenant's own key is the first.
      for (let i = 1; i < n; i++) {
        const res = await admin(ctx, '/admin/v1/keys', body);
        assert.equal(res.statusCode, 200, `${plan}: key ${i + 1} of ${n}: ${res.body}`);
      }
      assertError(await admin(ctx, '/admin/v1/keys', body), 409, 'ACTIVE_KEY_LIMIT');
    }
  });

  test('the Idempotency-Key is kept 24 hours: replayed a second before, a new run a second after', async () => {
    const ctx = get();
    const t = await tenantOn(ctx, 'pro');
    const key = randomUUID();
    const first = await run(ctx, t, 'music.generate', MUSIC, key);
    assert.equal(first.statusCode, 202, first.body);
    ctx.clock.advance(SPEC_IDEMPOTENCY_WINDOW_MS - 1000);
    const replay = await run(ctx, t, 'music.generate', MUSIC, key);
    assert.equal(replay.headers['idempotent-replayed'], 'true', 'within 24 h: replayed');
    assert.deepEqual(replay.json().data, first.json().data);
    ctx.clock.advance(2000);
    const fresh = await run(ctx, t, 'music.generate', MUSIC, key);
    assert.equal(fresh.statusCode, 202, fresh.body);
    assert.equal(fresh.headers['idempotent-replayed'], undefined, 'after 24 h: a new request');
    assert.notEqual(fresh.json().data.jobId, first.json().data.jobId, 'after 24 h: a new job');
    for (const id of [first.json().data.jobId, fresh.json().data.jobId]) await call(ctx, 'POST', `/v1/jobs/${id}/cancel`, { secret: t.secret, workspaceId: t.workspace.id });
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });
  test('waiting jobs: a workspace holds exactly its plan\'s waiting jobs (starter 50, pro 100); the next run is 429 QUEUE_FULL and writes nothing', async () => {
    const ctx = get();
    for (const plan of ['free', 'starter', 'pro'] as const) {
      const t = await tenantOn(ctx, plan);
      // Points are not what is measured here.
      assert.equal((await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { pointsPerMinute: 1_000_000, pointsPerMonth: 10_000_000 } })).statusCode, 200);
      const n = SPEC_PLAN_DEFAULTS[plan].waitingJobs;
      let first = '';
      for (let i = 0; i < n; i++) {
        const res = await run(ctx, t, 'music.generate', MUSIC);
        assert.equal(res.statusCode, 202, `${plan}: waiting job ${i + 1} of ${n}: ${res.body}`);
        first ||= res.json().data.jobId;
      }
      const before = await balance(ctx, t);
      const full = await run(ctx, t, 'music.generate', MUSIC);
      assertError(full, 429, 'QUEUE_FULL');
      assert.deepEqual(await balance(ctx, t), before, `${plan}: the refused run reserves nothing`);
      assert.equal(await jobCount(ctx, scopeOf(t)), n);
      // A cancelled job no longer waits: the workspace admits again.
      assert.equal((await call(ctx, 'POST', `/v1/jobs/${first}/cancel`, { secret: t.secret, workspaceId: t.workspace.id })).statusCode, 200);
      const again = await run(ctx, t, 'music.generate', MUSIC);
      assert.equal(again.statusCode, 202, again.body);
      assertError(await run(ctx, t, 'music.generate', MUSIC), 429, 'QUEUE_FULL');
      // (The test is the file's last: the jobs are left waiting, their holds open.)
      await assertLedgerInvariants(ctx.deps, scopeOf(t));
    }
  });
}, testKeySuite());
