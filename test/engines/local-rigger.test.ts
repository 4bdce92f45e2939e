/**
 * three-d.rig on the `rigger` local engine (issue 37 item 6): a skeleton and skin weights built
 * from the mesh's own shape. Checked on a voxel humanoid by what a rig is for: its branches reach
 * both hands, both feet and the head; the bind pose is the input exactly (node transforms
 * included); turning a shoulder moves that arm and nothing else; weights are valid glTF (the
 * Khronos validator finds no error); the input's data is kept. Unreadable files fail with
 * MEDIA_UNREADABLE naming why, never a crash (fuzzed). End to end on every database: a live key's
 * job returns the rigged model at the file's price; a model without a mesh fails uncharged.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import validator from 'gltf-validator';
import { GlbError, multiply, parseGlb, readAccessor, transformPoint, worldMatrices, writeGlb, type Glb, type Mat4 } from '../../src/providers/local/glb.js';
import { rigGlb } from '../../src/providers/local/rig.js';
import { RigError, rig, runSliced } from '../../src/providers/local/rig-skeleton.js';
import { ProviderError } from '../../src/providers/types.js';
import { compileStrict } from '../../src/http/validation.js';
import { findOperation } from '../../src/operations/registry.js';
import { assertOk } from '../support/assertions.js';
import { testDatabaseNames } from '../support/databases.js';
import { EXTREMITIES, HUMANOID, box, voxelGlb, voxelSurface, type Point } from '../support/glb-models.js';
import { createTestContext, disposeTestContext, type TestContext } from '../support/harness.js';
import { balance, drain, getJob, readCompleteOutput, run } from '../support/jobs.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { glb as meshlessGlb, upload } from '../support/media.js';
import { writeProvidersFile } from '../support/providers-file.js';
import { seedTenant, type Tenant } from '../support/seed.js';

const never = new AbortController().signal;
const TRANSFORM = { translation: [5, -2, 3], rotation: [0, Math.SQRT1_2, 0, Math.SQRT1_2], scale: [2, 2, 2] };

interface Skin {
  joints: number[];
  inverseBindMatrices: number;
  skeleton?: number;
}

/** The rigged model read back: per drawn primitive, its mesh-space vertices, joints and weights. */
function readRig(bytes: Buffer) {
  const glb = parseGlb(bytes);
  const skins = (glb.json.skins ?? []) as Skin[];
  const drawn = [...worldMatrices(glb.json)].filter(([node]) => glb.json.nodes![node]!.mesh !== undefined);
  const prims = drawn.flatMap(([node, world]) => {
    const n = glb.json.nodes![node]!;
    return glb.json.meshes![n.mesh!]!.primitives.map((p) => ({
      node,
      world,
      skin: skins[n.skin!]!,
      positions: readAccessor(glb, p.attributes.POSITION).values,
      joints: readAccessor(glb, p.attributes.JOINTS_0).values,
      weights: readAccessor(glb, p.attributes.WEIGHTS_0).values,
    }));
  });
  return { glb, skins, prims };
}

/** Vertices skinned with the joints' current node transforms (glTF's skinning: Σ w · joint world · inverse bind). */
function skinned(glb: Glb, prim: ReturnType<typeof readRig>['prims'][number]): Point[] {
  const world = worldMatrices(glb.json);
  const ibm = readAccessor(glb, prim.skin.inverseBindMatrices).values;
  const jointMatrix = prim.skin.joints.map((node, j) => multiply(world.get(node)!, ibm.subarray(j * 16, j * 16 + 16) as Mat4));
  const out: Point[] = [];
  for (let i = 0; i < prim.positions.length / 3; i++) {
    const p: Point = [0, 0, 0];
    for (let k = 0; k < 4; k++) {
      const w = prim.weights[i * 4 + k]!;
      if (w === 0) continue;
      const q = transformPoint(jointMatrix[prim.joints[i * 4 + k]!]!, prim.positions[i * 3]!, prim.positions[i * 3 + 1]!, prim.positions[i * 3 + 2]!);
      for (let c = 0; c < 3; c++) p[c]! += w * q[c]!;
    }
    out.push(p);
  }
  return out;
}

const distance = (a: readonly number[], b: readonly number[]) => Math.hypot(a[0]! - b[0]!, a[1]! - b[1]!, a[2]! - b[2]!);

/** Joint positions in world space (from the joint nodes) and their parents (from the node tree). */
function skeleton(glb: Glb, skin: Skin): { position: Point; parent: number }[] {
  const world = worldMatrices(glb.json);
  const parentOf = new Map<number, number>();
  skin.joints.forEach((node, j) => (glb.json.nodes![node]!.children ?? []).forEach((child) => parentOf.set(child, j)));
  return skin.joints.map((node) => ({ position: transformPoint(world.get(node)!, 0, 0, 0), parent: parentOf.get(node) ?? -1 }));
}

function ancestors(joints: { parent: number }[], j: number): Set<number> {
  const out = new Set<number>();
  for (let p = joints[j]!.parent; p >= 0; p = joints[p]!.parent) out.add(p);
  return out;
}

const nearest = (joints: { position: Point }[], p: Point) => joints.reduce((best, j, i) => (distance(j.position, p) < distance(joints[best]!.position, p) ? i : best), 0);

describe('rigger engine: a skeleton from the mesh', () => {
  let rigged: Buffer;
  let input: Buffer;
  before(async () => {
    input = voxelGlb([HUMANOID], TRANSFORM);
    rigged = (await rigGlb(input, never)).glb;
  });

  test('the skeleton is one tree whose branches reach both hands, both feet and the head, each in a branch of its own', () => {
    const { glb, skins } = readRig(rigged);
    assert.equal(skins.length, 1);
    const joints = skeleton(glb, skins[0]!);
    assert.equal(joints.filter((j) => j.parent < 0).length, 1, 'one root');
    const world = worldMatrices(glb.json).get(0)!;
    const ends = Object.entries(EXTREMITIES).map(([name, p]) => ({ name, at: transformPoint(world, ...p), joint: -1 }));
    for (const end of ends) {
      end.joint = nearest(joints, end.at);
      // Within two voxels (scaled by 2) of the tip: the chain reaches into the limb's end.
      assert.ok(distance(joints[end.joint]!.position, end.at) < 2 * 2.5, `${end.name}: nearest joint ${distance(joints[end.joint]!.position, end.at).toFixed(2)} away`);
    }
    for (const a of ends) {
      for (const b of ends) {
        if (a === b) continue;
        assert.notEqual(a.joint, b.joint, `${a.name} and ${b.name} have joints of their own`);
        assert.ok(!ancestors(joints, a.joint).has(b.joint), `${b.name}'s joint is not on ${a.name}'s chain`);
      }
    }
  });

  test('every vertex has weights summing to 1 on at most two existing joints, and the Khronos glTF validator finds no error', async () => {
    const { prims, skins } = readRig(rigged);
    const count = skins[0]!.joints.length;
    for (const prim of prims) {
      for (let i = 0; i < prim.weights.length / 4; i++) {
        const w = [0, 1, 2, 3].map((k) => prim.weights[i * 4 + k]!);
        assert.ok(Math.abs(w.reduce((s, x) => s + x, 0) - 1) < 1e-6, `vertex ${i}: weights ${w}`);
        assert.ok(w.filter((x) => x > 0).length <= 2);
        for (let k = 0; k < 4; k++) assert.ok(prim.joints[i * 4 + k]! < count);
      }
    }
    const report = await validator.validateBytes(new Uint8Array(rigged));
    const errors = report.issues.messages.filter((m: { severity: number }) => m.severity === 0);
    assert.deepEqual(errors, [], JSON.stringify(errors.slice(0, 5)));
  });

  test("the bind pose is the input exactly: skinned vertices sit where the node's translation, rotation and scale put them", () => {
    const { glb, prims } = readRig(rigged);
    for (const prim of prims) {
      const posed = skinned(glb, prim);
      posed.forEach((p, i) => {
        const expected = transformPoint(prim.world, prim.positions[i * 3]!, prim.positions[i * 3 + 1]!, prim.positions[i * 3 + 2]!);
        assert.ok(distance(p, expected) < 1e-3, `vertex ${i}: ${p} instead of ${expected}`);
      });
    }
  });

  test('turning the left shoulder moves the left hand and leaves the other hand, the feet and the head where they were', () => {
    const { glb, prims, skins } = readRig(rigged);
    const joints = skeleton(glb, skins[0]!);
    const world = worldMatrices(glb.json).get(0)!;
    const at = (p: Point) => transformPoint(world, ...p);
    // Up the chain from the left hand: the last joint still in the arm (arm cells reach x = -4, the torso starts at x = -3).
    const handJoint = nearest(joints, at(EXTREMITIES.leftHand!));
    let shoulder = handJoint;
    for (let j = handJoint; j >= 0; j = joints[j]!.parent) {
      const local = transformPoint(invertRigid(world), ...joints[j]!.position);
      if (local[0] < -5) shoulder = j;
      else break;
    }
    assert.notEqual(shoulder, handJoint, 'the arm has more than one joint');
    const node = glb.json.nodes![skins[0]!.joints[shoulder]!]!;
    node.rotation = [Math.SQRT1_2, 0, 0, Math.SQRT1_2]; // 90° about x (the arm lies along the world's z)
    const prim = prims[0]!;
    const before = prim.positions;
    const posed = skinned(glb, prim);
    const near = (p: Point) => posed.map((q, i) => ({ q, i })).filter(({ i }) => distance([before[i * 3]!, before[i * 3 + 1]!, before[i * 3 + 2]!], p) < 1.01);
    const moved = ({ q, i }: { q: Point; i: number }) => distance(q, transformPoint(world, before[i * 3]!, before[i * 3 + 1]!, before[i * 3 + 2]!));
    for (const name of ['rightHand', 'leftFoot', 'rightFoot', 'head']) {
      const verts = near(EXTREMITIES[name]!);
      assert.ok(verts.length > 0);
      for (const v of verts) assert.ok(moved(v) < 1e-3, `${name} vertex ${v.i} moved ${moved(v)}`);
    }
    const hand = near(EXTREMITIES.leftHand!);
    assert.ok(hand.length > 0);
    for (const v of hand) assert.ok(moved(v) > 3, `left hand vertex ${v.i} moved only ${moved(v)}`);
  });

  test("the input's data is kept: its BIN chunk begins the output's, its accessors and nodes are unchanged but for the skin", () => {
    const a = parseGlb(input);
    const b = parseGlb(rigged);
    assert.ok(b.bin.subarray(0, a.bin.length).equals(a.bin));
    assert.deepEqual(b.json.accessors!.slice(0, a.json.accessors!.length), a.json.accessors);
    const { skin, ...node } = b.json.nodes![0]!;
    assert.equal(skin, 0);
    assert.deepEqual(node, a.json.nodes![0]);
    assert.deepEqual(b.json.asset, a.json.asset);
  });

  test('a small separate piece (an eye) moves rigidly with one joint; a mesh drawn by two nodes gets a copy and a skin each', async () => {
    const eye = box(-1, -1, 18, 18, 3, 3); // in front of the face, not touching it
    const twoNodes = parseGlb(voxelGlb([HUMANOID, eye]));
    twoNodes.json.nodes!.push({ name: 'twin', mesh: 0, translation: [40, 0, 0] });
    twoNodes.json.scenes![0]!.nodes!.push(1);
    const out = readRig((await rigGlb(writeGlb(twoNodes.json, twoNodes.bin), never)).glb);
    assert.equal(out.skins.length, 2);
    assert.equal(out.glb.json.meshes!.length, 2, 'the second drawing has a copy of the mesh');
    const eyes = out.prims.filter((_, i) => i % 2 === 1);
    for (const prim of eyes) {
      const joints = new Set<number>();
      for (let i = 0; i < prim.weights.length / 4; i++) {
        assert.equal(prim.weights[i * 4], 1);
        joints.add(prim.joints[i * 4]!);
      }
      assert.equal(joints.size, 1, 'every vertex of the eye follows the same joint');
    }
    for (const prim of out.prims) {
      skinned(out.glb, prim).forEach((p, i) => assert.ok(distance(p, transformPoint(prim.world, prim.positions[i * 3]!, prim.positions[i * 3 + 1]!, prim.positions[i * 3 + 2]!)) < 1e-3));
    }
  });

  test('files it cannot rig are refused naming why', async () => {
    const refused = async (bytes: Buffer, why: RegExp) => {
      await assert.rejects(rigGlb(bytes, never), (err: unknown) => (err instanceof GlbError || err instanceof RigError) && why.test((err as Error).message));
    };
    await refused(Buffer.from('not a model at all'), /not a binary glTF/);
    await refused(input.subarray(0, input.length - 100), /past the end|past/);
    await refused(meshlessGlb(), /no mesh/);
    const withJson = (edit: (json: Record<string, any>) => void) => {
      const g = parseGlb(input);
      edit(g.json);
      return rewrite(g);
    };
    await refused(withJson((j) => (j.skins = [{ joints: [0] }])), /skinned already/);
    await refused(withJson((j) => (j.extensionsRequired = ['KHR_draco_mesh_compression'])), /compressed/);
    await refused(withJson((j) => (j.accessors[1].count = j.accessors[1].count * 100)), /runs past/);
    await refused(withJson((j) => (j.nodes[0].children = [0])), /twice/);
    await refused(withJson((j) => (j.meshes[0].primitives[0].mode = 1)), /no triangles/);
    const bad = parseGlb(input);
    bad.bin = Buffer.from(bad.bin);
    bad.bin.writeUInt32LE(10_000_000, (bad.json.bufferViews![1]!.byteOffset ?? 0) + 4);
    await refused(rewrite(bad), /index beyond/);
  });

  test('fuzz: any corruption of a model either rigs into a readable GLB or is refused as unreadable, never anything else', async () => {
    const small = voxelGlb([box(0, 3, 0, 0, 0, 0)]);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.nat(small.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }), fc.nat(small.length), async (edits, cut) => {
        const bytes = Buffer.from(small);
        for (const [at, value] of edits) bytes[at] = value;
        try {
          const out = await rigGlb(bytes.subarray(0, Math.max(cut, small.length - 64)), never);
          assert.ok(parseGlb(out.glb).json.skins);
        } catch (err) {
          assert.ok(err instanceof GlbError || err instanceof RigError || (err instanceof ProviderError && err.code === 'MEDIA_TOO_LARGE'), String(err));
        }
      }),
      { numRuns: 300 },
    );
  });

  test('the work runs in slices: other callbacks run while a large mesh is rigged, and a cancel stops it', async () => {
    const big = voxelSurface(box(0, 59, 0, 59, 0, 9));
    const mesh = { positions: Float64Array.from(big.positions), triangles: big.indices };
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      const result = await runSliced(rig(mesh), never);
      assert.ok(result.joints.length > 1);
    } finally {
      clearInterval(timer);
    }
    assert.ok(ticks > 2, `timers ran ${ticks} times during the rig`);
    const cancel = new AbortController();
    setTimeout(() => cancel.abort(new Error('cancelled')), 5);
    await assert.rejects(runSliced(rig(mesh), cancel.signal), /cancelled/);
  });
});

/** A GLB again from parsed (and edited) parts. */
const rewrite = (g: Glb) => writeGlb(g.json, g.bin);

/** The inverse of a rotation-translation-uniform-scale matrix (enough for these tests' node transform). */
function invertRigid(m: Mat4): Mat4 {
  const s2 = m[0]! ** 2 + m[1]! ** 2 + m[2]! ** 2;
  const out = new Float64Array(16);
  for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) out[c * 4 + r] = m[r * 4 + c]! / s2;
  for (let r = 0; r < 3; r++) out[12 + r] = -(out[r]! * m[12]! + out[4 + r]! * m[13]! + out[8 + r]! * m[14]!);
  out[15] = 1;
  return out;
}


const PRICE = 7_000;
const CREDITS = 1_000_000;

for (const dbName of testDatabaseNames()) {
  describe(`rigger engine: three-d.rig end to end [${dbName}]`, () => {
    let ctx: TestContext;
    let dir: string;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'was-rigger-test-'));
      const file = writeProvidersFile(dir, 'providers.json', {
        providers: { local: { type: 'local' } },
        operations: { 'three-d.rig': { provider: 'local', engine: 'rigger', price: { perRunMillicents: PRICE } } },
      });
      ctx = await createTestContext(dbName, { env: { PROVIDERS_FILE: file } });
    });
    after(async () => {
      if (ctx) await disposeTestContext(ctx);
      rmSync(dir, { recursive: true, force: true });
    });

    async function rigJob(t: Tenant, model: Buffer) {
      const mediaId = assertOk(await upload(ctx, t, model, { type: 'model/gltf-binary', filename: 'model.glb' })).data.id as string;
      const res = await run(ctx, t, 'three-d.rig', { mediaId });
      assert.equal(res.statusCode, 202, res.body);
      await drain(ctx);
      const job = await getJob(ctx, t, res.json().data.jobId);
      return { job, jobId: res.json().data.jobId as string };
    }

    test('a live key rigs an uploaded humanoid: the result is the rigged GLB (its sha256 as stated), its joint count, at the file\'s price', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const { job, jobId } = await rigJob(t, voxelGlb([HUMANOID]));
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.equal(job.costMillicents, PRICE);
      const result: Record<string, any> = JSON.parse((await readCompleteOutput(ctx, t, jobId)).bytes.toString('utf8'));
      const validate = compileStrict(findOperation('three-d.rig')!.resultSchema as object);
      assert.ok(validate(result), `the result matches the contract: ${JSON.stringify(validate.errors)}`);
      assert.equal(result.provider, 'local');
      assert.equal(result.glb.mimeType, 'model/gltf-binary');
      const u = new URL(result.glb.url);
      const download = await ctx.app.inject({ method: 'GET', url: `${u.pathname}${u.search}` });
      assert.equal(download.statusCode, 200);
      assert.equal(createHash('sha256').update(download.rawPayload).digest('hex'), result.glb.sha256);
      const rigged = readRig(download.rawPayload);
      assert.equal(rigged.skins[0]!.joints.length, result.joints);
      assert.ok(result.joints > 5);
      const b = await balance(ctx, t);
      assert.equal(b.totalMillicents, CREDITS - PRICE);
      assert.equal(b.reservedMillicents, 0);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('a GLB without a mesh fails MEDIA_UNREADABLE and costs nothing (why is checked above: "its scene has no mesh")', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const { job } = await rigJob(t, meshlessGlb());
      assert.equal(job.status, 'failed');
      assert.equal(job.errorCode, 'MEDIA_UNREADABLE');
      assert.equal(job.costMillicents, 0);
      const b = await balance(ctx, t);
      assert.equal(b.totalMillicents, CREDITS);
      assert.equal(b.reservedMillicents, 0);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });
  });
}
