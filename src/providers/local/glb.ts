/**
 * Binary glTF 2.0 (GLB) as the rigger reads and writes it: the container (a JSON chunk and an
 * optional BIN chunk), accessors read as numbers, node transforms, and new data appended to the
 * BIN chunk. Everything read comes from a user's file: every offset and count is checked against
 * the bytes there, and a file this code cannot read is a `GlbError` naming what is wrong (the
 * engine reports it as MEDIA_UNREADABLE), never an exception from deeper down.
 */

const MAGIC = 0x46546c67; // "glTF"
const CHUNK_JSON = 0x4e4f534a;
const CHUNK_BIN = 0x004e4942;

export const FLOAT = 5126;
export const UNSIGNED_SHORT = 5123;

const COMPONENT_BYTES: Record<number, number> = { 5120: 1, 5121: 1, 5122: 2, 5123: 2, 5125: 4, 5126: 4 };
const TYPE_SIZE: Record<string, number> = { SCALAR: 1, VEC2: 2, VEC3: 3, VEC4: 4, MAT2: 4, MAT3: 9, MAT4: 16 };

export class GlbError extends Error {}

/** The parts of glTF's JSON the rigger reads; the rest is kept as it was. */
export interface GltfJson {
  asset?: { version?: string; [key: string]: unknown };
  scene?: number;
  scenes?: { nodes?: number[] }[];
  nodes?: GltfNode[];
  meshes?: { primitives: GltfPrimitive[]; name?: string }[];
  accessors?: GltfAccessor[];
  bufferViews?: { buffer: number; byteOffset?: number; byteLength: number; byteStride?: number; target?: number }[];
  buffers?: { byteLength: number; uri?: string }[];
  skins?: unknown[];
  extensionsRequired?: string[];
  [key: string]: unknown;
}

export interface GltfNode {
  children?: number[];
  mesh?: number;
  skin?: number;
  matrix?: number[];
  translation?: number[];
  rotation?: number[];
  scale?: number[];
  name?: string;
  [key: string]: unknown;
}

export interface GltfPrimitive {
  attributes: Record<string, number>;
  indices?: number;
  mode?: number;
  [key: string]: unknown;
}

export interface GltfAccessor {
  bufferView?: number;
  byteOffset?: number;
  componentType: number;
  normalized?: boolean;
  count: number;
  type: string;
  sparse?: unknown;
  max?: number[];
  min?: number[];
}

export interface Glb {
  json: GltfJson;
  /** The BIN chunk (buffer 0), empty when the file has none. */
  bin: Buffer;
}

/** A valid glTF index: a non-negative safe integer. */
export const isIndex = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** Splits a GLB into its JSON and BIN chunks. */
export function parseGlb(bytes: Buffer): Glb {
  if (bytes.length < 20 || bytes.readUInt32LE(0) !== MAGIC) throw new GlbError('it is not a binary glTF (GLB) file');
  if (bytes.readUInt32LE(4) !== 2) throw new GlbError(`it is glTF version ${bytes.readUInt32LE(4)}; only version 2 is read`);
  const length = Math.min(bytes.readUInt32LE(8), bytes.length);
  let offset = 12;
  let json: GltfJson | undefined;
  let bin: Buffer = Buffer.alloc(0);
  while (offset + 8 <= length) {
    const chunkLength = bytes.readUInt32LE(offset);
    const type = bytes.readUInt32LE(offset + 4);
    const start = offset + 8;
    if (start + chunkLength > length) throw new GlbError('a chunk runs past the end of the file');
    if (type === CHUNK_JSON && json === undefined) {
      try {
        json = JSON.parse(bytes.subarray(start, start + chunkLength).toString('utf8')) as GltfJson;
      } catch {
        throw new GlbError('its JSON chunk is not valid JSON');
      }
      if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new GlbError('its JSON chunk is not an object');
    } else if (type === CHUNK_BIN && json !== undefined && bin.length === 0) {
      bin = bytes.subarray(start, start + chunkLength);
    }
    offset = start + chunkLength + ((4 - (chunkLength % 4)) % 4);
  }
  if (!json) throw new GlbError('it has no JSON chunk');
  return { json, bin };
}

/** Joins JSON and BIN into a GLB (chunks padded to 4 bytes: JSON with spaces, BIN with zeros). */
export function writeGlb(json: GltfJson, bin: Buffer): Buffer {
  const text = Buffer.from(JSON.stringify(json), 'utf8');
  const jsonChunk = Buffer.concat([text, Buffer.alloc((4 - (text.length % 4)) % 4, 0x20)]);
  const binChunk = Buffer.concat([bin, Buffer.alloc((4 - (bin.length % 4)) % 4)]);
  const total = 12 + 8 + jsonChunk.length + (binChunk.length > 0 ? 8 + binChunk.length : 0);
  const out = Buffer.alloc(total);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(2, 4);
  out.writeUInt32LE(total, 8);
  out.writeUInt32LE(jsonChunk.length, 12);
  out.writeUInt32LE(CHUNK_JSON, 16);
  jsonChunk.copy(out, 20);
  if (binChunk.length > 0) {
    const at = 20 + jsonChunk.length;
    out.writeUInt32LE(binChunk.length, at);
    out.writeUInt32LE(CHUNK_BIN, at + 4);
    binChunk.copy(out, at + 8);
  }
  return out;
}

function readComponent(view: DataView, at: number, componentType: number, normalized: boolean): number {
  switch (componentType) {
    case 5126:
      return view.getFloat32(at, true);
    case 5125:
      return view.getUint32(at, true);
    case 5123: {
      const v = view.getUint16(at, true);
      return normalized ? v / 65535 : v;
    }
    case 5122: {
      const v = view.getInt16(at, true);
      return normalized ? Math.max(v / 32767, -1) : v;
    }
    case 5121: {
      const v = view.getUint8(at);
      return normalized ? v / 255 : v;
    }
    default: {
      const v = view.getInt8(at);
      return normalized ? Math.max(v / 127, -1) : v;
    }
  }
}

/** An accessor's elements as numbers (`size` per element), checked against the BIN chunk. */
export function readAccessor(glb: Glb, index: unknown): { values: Float64Array; size: number; count: number } {
  const accessor = isIndex(index) ? glb.json.accessors?.[index] : undefined;
  if (!accessor || typeof accessor !== 'object') throw new GlbError(`accessor ${String(index)} does not exist`);
  const size = TYPE_SIZE[accessor.type];
  const componentBytes = COMPONENT_BYTES[accessor.componentType];
  if (!size || !componentBytes || !isIndex(accessor.count)) throw new GlbError(`accessor ${index} has an unknown type`);
  if (accessor.sparse !== undefined) throw new GlbError(`accessor ${index} is sparse, which the rigger does not read`);
  const count = accessor.count;
  const values = new Float64Array(count * size);
  if (accessor.bufferView === undefined) return { values, size, count }; // all zeros, as glTF says
  const view = isIndex(accessor.bufferView) ? glb.json.bufferViews?.[accessor.bufferView] : undefined;
  if (!view || view.buffer !== 0) throw new GlbError(`accessor ${index} reads a buffer outside the GLB file`);
  const viewOffset = view.byteOffset ?? 0;
  const elementBytes = size * componentBytes;
  const stride = view.byteStride ?? elementBytes;
  const offset = accessor.byteOffset ?? 0;
  if (![viewOffset, view.byteLength, stride, offset].every(isIndex) || stride < elementBytes) throw new GlbError(`accessor ${index} has an invalid layout`);
  if (count > 0 && offset + (count - 1) * stride + elementBytes > view.byteLength) throw new GlbError(`accessor ${index} runs past its buffer view`);
  if (viewOffset + view.byteLength > glb.bin.length) throw new GlbError(`buffer view ${accessor.bufferView} runs past the BIN chunk`);
  const data = new DataView(glb.bin.buffer, glb.bin.byteOffset + viewOffset, view.byteLength);
  const normalized = accessor.normalized === true;
  for (let i = 0; i < count; i++) {
    const base = offset + i * stride;
    for (let c = 0; c < size; c++) values[i * size + c] = readComponent(data, base + c * componentBytes, accessor.componentType, normalized);
  }
  return { values, size, count };
}

// ---------------------------------------------------------------------------------------------
// Transforms: 4x4 matrices, column-major as glTF writes them.

export type Mat4 = Float64Array;

export function identity(): Mat4 {
  const m = new Float64Array(16);
  m[0] = m[5] = m[10] = m[15] = 1;
  return m;
}

export function multiply(a: Mat4, b: Mat4): Mat4 {
  const out = new Float64Array(16);
  for (let col = 0; col < 4; col++) {
    for (let row = 0; row < 4; row++) {
      let sum = 0;
      for (let k = 0; k < 4; k++) sum += a[k * 4 + row]! * b[col * 4 + k]!;
      out[col * 4 + row] = sum;
    }
  }
  return out;
}

export function translation(x: number, y: number, z: number): Mat4 {
  const m = identity();
  m[12] = x;
  m[13] = y;
  m[14] = z;
  return m;
}

const numbers = (v: unknown, length: number): number[] | undefined =>
  Array.isArray(v) && v.length === length && v.every((n) => typeof n === 'number' && Number.isFinite(n)) ? (v as number[]) : undefined;

/** A node's local transform: its matrix, or translation × rotation × scale. */
export function localMatrix(node: GltfNode): Mat4 {
  const matrix = numbers(node.matrix, 16);
  if (matrix) return Float64Array.from(matrix);
  const [tx, ty, tz] = numbers(node.translation, 3) ?? [0, 0, 0];
  const [x, y, z, w] = numbers(node.rotation, 4) ?? [0, 0, 0, 1];
  const [sx, sy, sz] = numbers(node.scale, 3) ?? [1, 1, 1];
  const m = new Float64Array(16);
  m[0] = (1 - 2 * (y! * y! + z! * z!)) * sx!;
  m[1] = 2 * (x! * y! + z! * w!) * sx!;
  m[2] = 2 * (x! * z! - y! * w!) * sx!;
  m[4] = 2 * (x! * y! - z! * w!) * sy!;
  m[5] = (1 - 2 * (x! * x! + z! * z!)) * sy!;
  m[6] = 2 * (y! * z! + x! * w!) * sy!;
  m[8] = 2 * (x! * z! + y! * w!) * sz!;
  m[9] = 2 * (y! * z! - x! * w!) * sz!;
  m[10] = (1 - 2 * (x! * x! + y! * y!)) * sz!;
  m[12] = tx!;
  m[13] = ty!;
  m[14] = tz!;
  m[15] = 1;
  return m;
}

export function transformPoint(m: Mat4, x: number, y: number, z: number): [number, number, number] {
  const w = m[3]! * x + m[7]! * y + m[11]! * z + m[15]! || 1;
  return [(m[0]! * x + m[4]! * y + m[8]! * z + m[12]!) / w, (m[1]! * x + m[5]! * y + m[9]! * z + m[13]!) / w, (m[2]! * x + m[6]! * y + m[10]! * z + m[14]!) / w];
}

/** The scene's nodes: the default scene's (or the first's), or every node no other node holds. */
export function sceneRoots(json: GltfJson): number[] {
  const scenes = json.scenes ?? [];
  const scene = scenes[isIndex(json.scene) ? json.scene : 0];
  if (scene) return (scene.nodes ?? []).filter(isIndex);
  const nodes = json.nodes ?? [];
  const held = new Set(nodes.flatMap((n) => (Array.isArray(n.children) ? n.children : [])));
  return nodes.map((_, i) => i).filter((i) => !held.has(i));
}

/** Each node reachable from the scene with its world matrix, once (a node graph with a cycle is refused). */
export function worldMatrices(json: GltfJson): Map<number, Mat4> {
  const nodes = json.nodes ?? [];
  const world = new Map<number, Mat4>();
  const visit = (index: number, parent: Mat4) => {
    const node = nodes[index];
    if (!node || typeof node !== 'object') throw new GlbError(`node ${index} does not exist`);
    if (world.has(index)) throw new GlbError(`node ${index} appears twice in the scene graph`);
    const m = multiply(parent, localMatrix(node));
    world.set(index, m);
    for (const child of Array.isArray(node.children) ? node.children : []) {
      if (!isIndex(child)) throw new GlbError(`node ${index} has an invalid child`);
      visit(child, m);
    }
  };
  for (const root of sceneRoots(json)) visit(root, identity());
  return world;
}

/** New data for the BIN chunk, each piece a new buffer view (4-byte aligned) with one accessor. */
export class BinAppender {
  private readonly chunks: Buffer[];
  private length: number;

  constructor(private readonly glb: Glb) {
    this.chunks = [glb.bin];
    this.length = glb.bin.length;
  }

  /** Adds an accessor over `data` in a new buffer view; returns the accessor's index. */
  accessor(data: Buffer, accessor: Omit<GltfAccessor, 'bufferView'>, target?: number): number {
    const json = this.glb.json;
    const pad = (4 - (this.length % 4)) % 4;
    if (pad) this.chunks.push(Buffer.alloc(pad));
    const byteOffset = this.length + pad;
    this.chunks.push(data);
    this.length = byteOffset + data.length;
    json.bufferViews ??= [];
    json.bufferViews.push({ buffer: 0, byteOffset, byteLength: data.length, ...(target ? { target } : {}) });
    json.accessors ??= [];
    json.accessors.push({ bufferView: json.bufferViews.length - 1, ...accessor });
    return json.accessors.length - 1;
  }

  /** The BIN chunk with everything added; buffer 0's length is set to it. */
  finish(): Buffer {
    const json = this.glb.json;
    json.buffers ??= [];
    if (json.buffers.length === 0) json.buffers.push({ byteLength: 0 });
    json.buffers[0]!.byteLength = this.length;
    return Buffer.concat(this.chunks, this.length);
  }
}
