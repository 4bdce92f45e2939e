/**
 * GLB models for the rigger's tests: the closed surface of a set of unit voxels, written as an
 * exporter writes a flat-shaded mesh (four vertices per face, so welding is exercised), and a
 * voxel humanoid with known extremities.
 */
import { writeGlb, type GltfJson } from '../../src/providers/local/glb.js';

export type Cell = [number, number, number];
export type Point = [number, number, number];

/** Every cell of the box [x0..x1] × [y0..y1] × [z0..z1] (inclusive). */
export function box(x0: number, x1: number, y0: number, y1: number, z0: number, z1: number): Cell[] {
  const cells: Cell[] = [];
  for (let x = x0; x <= x1; x++) for (let y = y0; y <= y1; y++) for (let z = z0; z <= z1; z++) cells.push([x, y, z]);
  return cells;
}

// The six faces of a unit cube: the neighbour they face and their corners, counter-clockwise seen from outside.
const FACES: { n: Cell; corners: Cell[] }[] = [
  { n: [1, 0, 0], corners: [[1, 0, 0], [1, 1, 0], [1, 1, 1], [1, 0, 1]] },
  { n: [-1, 0, 0], corners: [[0, 0, 0], [0, 0, 1], [0, 1, 1], [0, 1, 0]] },
  { n: [0, 1, 0], corners: [[0, 1, 0], [0, 1, 1], [1, 1, 1], [1, 1, 0]] },
  { n: [0, -1, 0], corners: [[0, 0, 0], [1, 0, 0], [1, 0, 1], [0, 0, 1]] },
  { n: [0, 0, 1], corners: [[0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]] },
  { n: [0, 0, -1], corners: [[0, 0, 0], [0, 1, 0], [1, 1, 0], [1, 0, 0]] },
];

/** The surface of the cells: positions (four per exposed face) and triangle indices. */
export function voxelSurface(cells: Cell[]): { positions: Float32Array; indices: Uint32Array } {
  const filled = new Set(cells.map((c) => c.join(',')));
  const positions: number[] = [];
  const indices: number[] = [];
  for (const [x, y, z] of cells) {
    for (const face of FACES) {
      if (filled.has([x + face.n[0], y + face.n[1], z + face.n[2]].join(','))) continue;
      const first = positions.length / 3;
      for (const [cx, cy, cz] of face.corners) positions.push(x + cx, y + cy, z + cz);
      indices.push(first, first + 1, first + 2, first, first + 2, first + 3);
    }
  }
  return { positions: Float32Array.from(positions), indices: Uint32Array.from(indices) };
}

export interface NodeTransform {
  translation?: number[];
  rotation?: number[];
  scale?: number[];
}

/** A GLB of one node drawing one mesh per cell set (each set one primitive), with `transform` on the node. */
export function voxelGlb(primitives: Cell[][], transform: NodeTransform = {}): Buffer {
  const json: GltfJson = { asset: { version: '2.0', generator: 'rigger tests' }, scene: 0, scenes: [{ nodes: [0] }], nodes: [{ name: 'body', mesh: 0, ...transform }], meshes: [{ primitives: [] }], accessors: [], bufferViews: [], buffers: [] };
  const chunks: Buffer[] = [];
  let length = 0;
  const view = (data: Buffer, target: number) => {
    json.bufferViews!.push({ buffer: 0, byteOffset: length, byteLength: data.length, target });
    chunks.push(data);
    length += data.length;
    return json.bufferViews!.length - 1;
  };
  for (const cells of primitives) {
    const { positions, indices } = voxelSurface(cells);
    const min = [Infinity, Infinity, Infinity];
    const max = [-Infinity, -Infinity, -Infinity];
    positions.forEach((v, i) => {
      min[i % 3] = Math.min(min[i % 3]!, v);
      max[i % 3] = Math.max(max[i % 3]!, v);
    });
    json.accessors!.push({ bufferView: view(Buffer.from(positions.buffer), 34962), componentType: 5126, count: positions.length / 3, type: 'VEC3', min, max });
    json.accessors!.push({ bufferView: view(Buffer.from(indices.buffer), 34963), componentType: 5125, count: indices.length, type: 'SCALAR' });
    json.meshes![0]!.primitives.push({ attributes: { POSITION: json.accessors!.length - 2 }, indices: json.accessors!.length - 1 });
  }
  json.buffers!.push({ byteLength: length });
  return writeGlb(json, Buffer.concat(chunks));
}

/** A humanoid of voxels (y up, facing +z): legs, torso, arms held out, head. */
export const HUMANOID: Cell[] = [
  ...box(-3, -2, 0, 7, 0, 1), // left leg
  ...box(1, 2, 0, 7, 0, 1), // right leg
  ...box(-3, 2, 8, 15, 0, 1), // torso
  ...box(-11, -4, 14, 15, 0, 1), // left arm
  ...box(3, 10, 14, 15, 0, 1), // right arm
  ...box(-2, 1, 16, 19, 0, 1), // head
];

/** The humanoid's extremities, in its own (mesh) space. */
export const EXTREMITIES: Record<string, Point> = {
  leftHand: [-11, 15, 1],
  rightHand: [11, 15, 1],
  leftFoot: [-2, 0, 1],
  rightFoot: [2, 0, 1],
  head: [0, 20, 1],
};
