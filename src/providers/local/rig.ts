/**
 * The `rigger` local engine (three-d.rig): reads a binary glTF (GLB) model, builds a skeleton and
 * skin weights from its triangles (rig-skeleton.ts) and returns the same model with them added:
 * joint nodes under one root added to the scene, one skin per mesh node (its inverse bind
 * matrices include that node's world transform, so the bind pose is exactly the input), and
 * JOINTS_0 / WEIGHTS_0 on every primitive. Nothing else in the file changes: materials, textures,
 * animations and extensions are kept byte for byte in the BIN chunk.
 *
 * Invariants:
 * - The input must be a GLB without a skin; a file the rigger cannot read fails the job with
 *   MEDIA_UNREADABLE naming why (not glTF 2.0, compressed geometry, a skin already, no triangles,
 *   offsets outside the file), and one of more than MAX_VERTICES vertices with MEDIA_TOO_LARGE.
 *   Both are found before any cost: the job is charged nothing.
 * - The work runs in slices between other work (runSliced), so a large mesh does not block the
 *   service, and a cancel stops it between slices.
 * - Cost: the entry's perRunMillicents (no quantities), charged once the rigged model exists.
 * - `prompt` is not used: the skeleton follows the mesh's shape, whatever it is.
 */
import { ProviderError, type Provider, type ProviderRun } from '../types.js';
import type { LocalContext } from '../types.js';
import { BinAppender, FLOAT, GlbError, isIndex, UNSIGNED_SHORT, parseGlb, readAccessor, sceneRoots, transformPoint, translation, multiply, worldMatrices, writeGlb, type Glb, type GltfPrimitive, type Mat4 } from './glb.js';
import { tick } from './rig-graph.js';
import { RigError, rig, runSliced, type Rig } from './rig-skeleton.js';

export const MAX_VERTICES = 1_000_000;
const GLB_MIME = 'model/gltf-binary';
const ARRAY_BUFFER = 34962;
const COMPRESSIONS = ['KHR_draco_mesh_compression', 'EXT_meshopt_compression'];

/** One drawing of a mesh: the node that places it and its world matrix. */
interface Instance {
  node: number;
  mesh: number;
  world: Mat4;
}

/** A primitive of an instance and where its vertices sit in the rig's vertex list. */
interface Slice {
  instance: number;
  primitive: number;
  first: number;
  count: number;
}

function instancesOf(glb: Glb): Instance[] {
  const out: Instance[] = [];
  for (const [node, world] of worldMatrices(glb.json)) {
    const mesh = glb.json.nodes![node]!.mesh;
    if (mesh === undefined) continue;
    if (!isIndex(mesh) || !glb.json.meshes?.[mesh] || !Array.isArray(glb.json.meshes[mesh].primitives)) throw new GlbError(`node ${node} names a mesh that does not exist`);
    out.push({ node, mesh, world });
  }
  if (out.length === 0) throw new GlbError('its scene has no mesh');
  return out;
}

/** Appends a primitive's triangles to `out` as vertex indices offset by `first` (points and lines have none). */
function* appendTriangles(glb: Glb, p: GltfPrimitive, count: number, first: number, out: number[]): Generator<void> {
  const mode = p.mode ?? 4;
  if (mode !== 4 && mode !== 5 && mode !== 6) return;
  const given = p.indices === undefined ? undefined : readAccessor(glb, p.indices).values;
  const length = given ? given.length : count;
  const at = (i: number) => (given ? given[i]! : i);
  for (let i = 0; i < length; i++) {
    if (tick()) yield;
    const v = at(i);
    if (!Number.isInteger(v) || v < 0 || v >= count) throw new GlbError('a primitive has an index beyond its vertices');
  }
  const corners = mode === 4 ? Math.floor(length / 3) : Math.max(0, length - 2);
  for (let t = 0; t < corners; t++) {
    if (tick()) yield;
    if (mode === 4) out.push(first + at(3 * t), first + at(3 * t + 1), first + at(3 * t + 2));
    else if (mode === 5) out.push(first + at(t + (t % 2)), first + at(t + 1 - (t % 2)), first + at(t + 2));
    else out.push(first + at(0), first + at(t + 1), first + at(t + 2));
  }
}

/** The world-space vertices and triangles of every drawn primitive, and where each primitive's are. */
function* collect(glb: Glb, instances: Instance[]): Generator<void, { positions: Float64Array; triangles: Uint32Array; slices: Slice[] }> {
  const positions: number[] = [];
  const triangles: number[] = [];
  const slices: Slice[] = [];
  for (const [instance, inst] of instances.entries()) {
    for (const [primitive, p] of glb.json.meshes![inst.mesh]!.primitives.entries()) {
      if (!p || typeof p !== 'object' || typeof p.attributes !== 'object' || p.attributes === null) throw new GlbError(`mesh ${inst.mesh} has an invalid primitive`);
      if (p.attributes.JOINTS_0 !== undefined) throw new GlbError('it is skinned already');
      const read = readAccessor(glb, p.attributes.POSITION);
      if (read.size !== 3) throw new GlbError(`mesh ${inst.mesh} has positions that are not 3D`);
      const first = positions.length / 3;
      if (first + read.count > MAX_VERTICES) throw new ProviderError('MEDIA_TOO_LARGE', `The model has more than ${MAX_VERTICES} vertices (counted once per drawing of a mesh).`);
      for (let i = 0; i < read.count; i++) {
        if (tick()) yield;
        const [x, y, z] = transformPoint(inst.world, read.values[i * 3]!, read.values[i * 3 + 1]!, read.values[i * 3 + 2]!);
        positions.push(x, y, z);
      }
      yield* appendTriangles(glb, p, read.count, first, triangles);
      slices.push({ instance, primitive, first, count: read.count });
    }
  }
  return { positions: Float64Array.from(positions), triangles: Uint32Array.from(triangles), slices };
}

/** The model with the rig added (see the header). */
function write(glb: Glb, instances: Instance[], slices: Slice[], result: Rig): Buffer {
  const json = glb.json;
  const bin = new BinAppender(glb);
  json.nodes ??= [];
  json.meshes ??= [];

  // A mesh drawn by several nodes gets a copy per further node: the weights depend on where it is drawn.
  const meshOf: number[] = [];
  const used = new Set<number>();
  for (const inst of instances) {
    if (!used.has(inst.mesh)) {
      used.add(inst.mesh);
      meshOf.push(inst.mesh);
      continue;
    }
    const source = json.meshes[inst.mesh]!;
    json.meshes.push({ ...source, primitives: source.primitives.map((p) => ({ ...p, attributes: { ...p.attributes } })) });
    meshOf.push(json.meshes.length - 1);
    json.nodes[inst.node]!.mesh = json.meshes.length - 1;
  }
  for (const s of slices) {
    const joints = Buffer.from(result.jointsOf.buffer, result.jointsOf.byteOffset + s.first * 8, s.count * 8);
    const weights = Buffer.from(result.weightsOf.buffer, result.weightsOf.byteOffset + s.first * 16, s.count * 16);
    const attributes = json.meshes[meshOf[s.instance]!]!.primitives[s.primitive]!.attributes;
    attributes.JOINTS_0 = bin.accessor(joints, { componentType: UNSIGNED_SHORT, count: s.count, type: 'VEC4' }, ARRAY_BUFFER);
    attributes.WEIGHTS_0 = bin.accessor(weights, { componentType: FLOAT, count: s.count, type: 'VEC4' }, ARRAY_BUFFER);
  }

  // Joint nodes, placed relative to their parents; the root joint joins the scene.
  const base = json.nodes.length;
  result.joints.forEach((joint, i) => {
    const parent = joint.parent >= 0 ? result.joints[joint.parent]!.position : [0, 0, 0];
    json.nodes!.push({ name: i === 0 ? 'rig_root' : `rig_joint_${i}`, translation: joint.position.map((v, k) => v - parent[k]!) });
  });
  result.joints.forEach((joint, i) => {
    if (joint.parent < 0) return;
    const parent = json.nodes![base + joint.parent]!;
    parent.children = [...(parent.children ?? []), base + i];
  });
  if (json.scenes && json.scenes.length > 0) {
    const scene = json.scenes[isIndex(json.scene) && json.scene < json.scenes.length ? json.scene : 0]!;
    scene.nodes = [...(scene.nodes ?? []), base];
  } else {
    json.scenes = [{ nodes: [...sceneRoots(json).filter((n) => n < base), base] }];
    json.scene = 0;
  }

  // One skin per drawing: joint j's inverse bind matrix takes the mesh from its node's space to j's.
  json.skins = [];
  const jointNodes = result.joints.map((_, i) => base + i);
  instances.forEach((inst, k) => {
    const matrices = new Float32Array(result.joints.length * 16);
    result.joints.forEach((joint, j) => matrices.set(multiply(translation(-joint.position[0], -joint.position[1], -joint.position[2]), inst.world), j * 16));
    const inverseBindMatrices = bin.accessor(Buffer.from(matrices.buffer), { componentType: FLOAT, count: result.joints.length, type: 'MAT4' });
    json.skins!.push({ joints: jointNodes, inverseBindMatrices, skeleton: base, name: `rig ${k}` });
    json.nodes![inst.node]!.skin = k;
  });
  return writeGlb(json, bin.finish());
}

/** Rigs a GLB; `GlbError` and `RigError` say why a file cannot be rigged. */
export async function rigGlb(bytes: Buffer, signal: AbortSignal): Promise<{ glb: Buffer; joints: number }> {
  const glb = parseGlb(bytes);
  if (glb.json.asset?.version !== undefined && !String(glb.json.asset.version).startsWith('2.')) throw new GlbError(`it is glTF ${String(glb.json.asset.version)}, not 2.x`);
  const compression = (glb.json.extensionsRequired ?? []).find((e) => COMPRESSIONS.includes(e));
  if (compression) throw new GlbError(`its geometry is compressed (${compression}); export it uncompressed`);
  if (Array.isArray(glb.json.skins) && glb.json.skins.length > 0) throw new GlbError('it is skinned already');
  const instances = instancesOf(glb);
  const { slices, result } = await runSliced(
    (function* () {
      const { positions, triangles, slices } = yield* collect(glb, instances);
      return { slices, result: yield* rig({ positions, triangles }) };
    })(),
    signal,
  );
  return { glb: write(glb, instances, slices, result), joints: result.joints.length };
}

export function riggerEngine(_ctx: LocalContext): Provider {
  return {
    name: 'local',
    async run(job: ProviderRun) {
      const mediaId = String(job.input.mediaId);
      const { bytes, mimeType } = await job.media.read(mediaId);
      if (mimeType !== GLB_MIME) throw new ProviderError('MEDIA_UNREADABLE', `Input ${mediaId} is ${mimeType}; the rigger reads binary glTF models (${GLB_MIME}).`);
      let rigged: { glb: Buffer; joints: number };
      try {
        rigged = await rigGlb(bytes, job.signal);
      } catch (err) {
        if (err instanceof GlbError || err instanceof RigError) throw new ProviderError('MEDIA_UNREADABLE', `Input ${mediaId} cannot be rigged: ${err.message}.`);
        throw err;
      }
      return {
        data: { joints: rigged.joints, provider: job.route.providerName, model: job.route.model },
        files: [{ field: 'glb', name: 'rigged.glb', mimeType: GLB_MIME, bytes: rigged.glb }],
        costMillicents: job.charge({}),
      };
    },
  };
}
