/**
 * The rigger's skeleton and skin weights, from a triangle mesh alone (no model, no template).
 *
 * How (a Reeb graph of the geodesic distance from the mesh's centre, the classic construction):
 * 1. The mesh becomes a welded graph (rig-graph.ts); each connected piece is taken on its own.
 * 2. A piece's centre is the vertex whose larger distance to the two ends of the piece's longest
 *    path is smallest (a humanoid's chest); the geodesic distance from there orders its vertices.
 * 3. The distance range is cut into LEVELS bands; the connected parts of each band are the
 *    skeleton's joints (at their centroid), and each joint's parent is the part of a lower band its
 *    vertices' shortest paths come from. So a limb becomes a chain that branches where the body
 *    does: arms, legs and head hang off the torso without any template.
 * 4. Clean-up: parts of one band that lead into the same part of the next are one slice seen from
 *    two sides and merge; parts of fewer than MIN_PART_SHARE of the piece's vertices (fingertips,
 *    noise) and parts within half a band of their parent (no bend) merge into the parent. Pieces of
 *    fewer than MIN_PIECE_SHARE of the mesh's vertices (eyes, buttons) move rigidly with the joint
 *    nearest their centre; larger ones get their own chains, hung from the nearest joint.
 * 5. Each vertex follows its part's joint, blended linearly across band boundaries with the
 *    neighbouring part (50/50 at the boundary), so a bend is smooth; at most 2 of the 4 glTF
 *    influences are used and the weights sum to 1.
 *
 * Everything is a generator that yields every few thousand steps (runSliced runs it).
 */
import { RigError, buildGraph, dijkstra, find, pieces, tick, type Graph, type RigMesh } from './rig-graph.js';

export { RigError, runSliced, type RigMesh } from './rig-graph.js';

export const LEVELS = 12;
const MIN_PART_SHARE = 0.002;
const MIN_PIECE_SHARE = 0.1;

export interface Joint {
  position: [number, number, number];
  /** Index of the parent joint (always lower), -1 for the root. */
  parent: number;
}

export interface Rig {
  joints: Joint[];
  /** Four joint indices per vertex (unused slots 0 with weight 0). */
  jointsOf: Uint16Array;
  /** Four weights per vertex, summing to 1. */
  weightsOf: Float32Array;
}

/** The geodesic distance from a piece's centre, and its bands. */
interface Bands {
  dist: Float64Array;
  pred: Int32Array;
  width: number;
  level(v: number): number;
}

/** A connected part of one band: a joint to be, unless merged away. */
interface Part {
  level: number;
  count: number;
  sum: [number, number, number];
  votes: Map<number, number>;
  parent: number;
  alive: boolean;
}

/** Per welded vertex: its joint, the joint it blends with (-1: none) and that joint's share. */
interface Blend {
  joint: Int32Array;
  other: Int32Array;
  share: Float64Array;
}

const centroid = (part: Part): [number, number, number] => [part.sum[0] / part.count, part.sum[1] / part.count, part.sum[2] / part.count];

function* bandsOf(g: Graph, members: Int32Array): Generator<void, Bands> {
  const dist = new Float64Array(g.count);
  const pred = new Int32Array(g.count);
  const fromB = new Float64Array(g.count);
  const fromC = new Float64Array(g.count);
  const b = yield* dijkstra(g, members[0]!, dist, pred, members);
  const c = yield* dijkstra(g, b, fromB, pred, members);
  yield* dijkstra(g, c, fromC, pred, members);
  let centre = members[0]!;
  for (const v of members) if (Math.max(fromB[v]!, fromC[v]!) < Math.max(fromB[centre]!, fromC[centre]!)) centre = v;
  yield* dijkstra(g, centre, dist, pred, members);
  let maxD = 0;
  for (const v of members) maxD = Math.max(maxD, dist[v]!);
  const width = maxD / LEVELS || 1;
  return { dist, pred, width, level: (v) => Math.min(LEVELS - 1, Math.floor(dist[v]! / width)) };
}

/** Union-find of the band parts: connected within a band, and the two sides of one slice joined. */
function* unionParts(g: Graph, members: Int32Array, { level }: Bands): Generator<void, Int32Array> {
  const uf = new Int32Array(g.count);
  for (const v of members) uf[v] = v;
  for (const v of members) {
    if (tick()) yield;
    for (let e = g.start[v]!; e < g.start[v + 1]!; e++) {
      const w = g.next[e]!;
      if (level(w) !== level(v)) continue;
      const rv = find(uf, v);
      const rw = find(uf, w);
      if (rv !== rw) uf[rv] = rw;
    }
  }
  // Parts of one band leading into the same part of the next band are one slice of the shape cut
  // on its near and far sides (a band round a thin limb is a front and a back strip): they merge,
  // from the outermost band inward, so each slice is one part whatever the thickness.
  for (let l = LEVELS - 2; l >= 0; l--) {
    const lowerOf = new Map<number, number>();
    for (const v of members) {
      if (level(v) !== l) continue;
      if (tick()) yield;
      for (let e = g.start[v]!; e < g.start[v + 1]!; e++) {
        const w = g.next[e]!;
        if (level(w) !== l + 1) continue;
        const up = find(uf, w);
        const seen = lowerOf.get(up);
        const own = find(uf, v);
        if (seen === undefined) lowerOf.set(up, own);
        else if (find(uf, seen) !== own) uf[own] = find(uf, seen);
      }
    }
  }
  return uf;
}

/** The parts, each with its centroid sums and its parent (the lower part its shortest paths come from most). */
function* collectParts(g: Graph, members: Int32Array, bands: Bands, uf: Int32Array): Generator<void, { parts: Part[]; partOf: Int32Array }> {
  const indexOfRoot = new Map<number, number>();
  const partOf = new Int32Array(g.count);
  const parts: Part[] = [];
  for (const v of members) {
    if (tick()) yield;
    const r = find(uf, v);
    let p = indexOfRoot.get(r);
    if (p === undefined) {
      p = parts.length;
      indexOfRoot.set(r, p);
      parts.push({ level: bands.level(v), count: 0, sum: [0, 0, 0], votes: new Map(), parent: -1, alive: true });
    }
    partOf[v] = p;
    const part = parts[p]!;
    part.count++;
    for (let k = 0; k < 3; k++) part.sum[k]! += g.pos[v * 3 + k]!;
  }
  for (const v of members) {
    if (tick()) yield;
    const p = bands.pred[v]!;
    if (p < 0 || bands.level(p) >= bands.level(v)) continue;
    const votes = parts[partOf[v]!]!.votes;
    votes.set(partOf[p]!, (votes.get(partOf[p]!) ?? 0) + 1);
  }
  for (const part of parts) {
    let best = -1;
    for (const [candidate, n] of part.votes) if (best < 0 || n > (part.votes.get(best) ?? 0)) best = candidate;
    part.parent = best;
  }
  return { parts, partOf };
}

/** Merges small parts (deepest first) and parts that add no bend (innermost first); returns where each part went. */
function mergeParts(parts: Part[], minCount: number, width: number): (p: number) => number {
  const merged = parts.map((_, i) => i);
  const kids: number[][] = parts.map(() => []);
  parts.forEach((part, i) => part.parent >= 0 && kids[part.parent]!.push(i));
  const mergeIntoParent = (p: number) => {
    const part = parts[p]!;
    const parent = parts[part.parent]!;
    part.alive = false;
    merged[p] = part.parent;
    parent.count += part.count;
    for (let k = 0; k < 3; k++) parent.sum[k]! += part.sum[k]!;
    for (const kid of kids[p]!) {
      parts[kid]!.parent = part.parent;
      kids[part.parent]!.push(kid);
    }
    kids[p] = [];
  };
  const deepestFirst = parts.map((_, i) => i).sort((x, y) => parts[y]!.level - parts[x]!.level);
  for (const p of deepestFirst) if (parts[p]!.parent >= 0 && parts[p]!.count < minCount) mergeIntoParent(p);
  for (const p of [...deepestFirst].reverse()) {
    const part = parts[p]!;
    if (!part.alive || part.parent < 0) continue;
    const [x, y, z] = centroid(part);
    const [px, py, pz] = centroid(parts[part.parent]!);
    if (Math.hypot(x - px, y - py, z - pz) < width / 2) mergeIntoParent(p);
  }
  const resolve = (p: number): number => (parts[p]!.alive ? p : resolve(merged[p]!));
  return resolve;
}

/** Joints of the live parts in breadth-first order (a parent's index below its children's). */
function placeJoints(parts: Part[], joints: Joint[], attachTo: number): { jointOf: Int32Array; children: Map<number, number[]> } {
  const jointOf = new Int32Array(parts.length).fill(-1);
  const children = new Map<number, number[]>();
  const tops: number[] = [];
  parts.forEach((part, i) => {
    if (!part.alive) return;
    if (part.parent < 0) tops.push(i);
    else if (children.has(part.parent)) children.get(part.parent)!.push(i);
    else children.set(part.parent, [i]);
  });
  // One part has no parent (the band round the centre); should another, it hangs from that one.
  const queue = [...tops];
  let first = -1;
  while (queue.length) {
    const p = queue.shift()!;
    const parent = parts[p]!.parent;
    jointOf[p] = joints.length;
    joints.push({ position: centroid(parts[p]!), parent: parent >= 0 ? jointOf[parent]! : first >= 0 ? first : attachTo });
    if (parent < 0 && first < 0) first = jointOf[p]!;
    queue.push(...(children.get(p) ?? []));
  }
  return { jointOf, children };
}

/** Joints and blends of one piece (see the header); the piece's root hangs from `attachTo` (-1: the root). */
function* skeletonOf(g: Graph, members: Int32Array, joints: Joint[], blend: Blend, attachTo: number): Generator<void> {
  const bands = yield* bandsOf(g, members);
  const uf = yield* unionParts(g, members, bands);
  const { parts, partOf } = yield* collectParts(g, members, bands, uf);
  const resolve = mergeParts(parts, Math.max(1, Math.floor(members.length * MIN_PART_SHARE)), bands.width);
  const { jointOf, children } = placeJoints(parts, joints, attachTo);
  // Blends: toward the parent in a band's lower half, toward the nearest child in its upper half.
  for (const v of members) {
    if (tick()) yield;
    const own = resolve(partOf[v]!);
    const part = parts[own]!;
    blend.joint[v] = jointOf[own]!;
    if (part.level !== bands.level(v)) continue; // a vertex of a merged part follows the part that took it
    const t = Math.min(1, Math.max(0, bands.dist[v]! / bands.width - part.level));
    let other = -1;
    if (t < 0.5 && part.parent >= 0) other = part.parent;
    else if (t > 0.5) {
      let best = Infinity;
      for (const child of children.get(own) ?? []) {
        const [x, y, z] = centroid(parts[child]!);
        const d = Math.hypot(g.pos[v * 3]! - x, g.pos[v * 3 + 1]! - y, g.pos[v * 3 + 2]! - z);
        if (d < best) [best, other] = [d, child];
      }
    }
    if (other < 0) continue;
    blend.other[v] = jointOf[other]!;
    blend.share[v] = Math.abs(0.5 - t);
  }
}

function nearestJoint(joints: Joint[], [x, y, z]: readonly number[]): number {
  let best = 0;
  let bestD = Infinity;
  joints.forEach((j, i) => {
    const d = (j.position[0] - x!) ** 2 + (j.position[1] - y!) ** 2 + (j.position[2] - z!) ** 2;
    if (d < bestD) [bestD, best] = [d, i];
  });
  return best;
}

function centreOf(g: Graph, members: Int32Array): number[] {
  const c = [0, 0, 0];
  for (const v of members) for (let k = 0; k < 3; k++) c[k]! += g.pos[v * 3 + k]! / members.length;
  return c;
}

/** The skeleton and skin weights of a mesh (see the header). */
export function* rig(mesh: RigMesh): Generator<void, Rig> {
  const n = mesh.positions.length / 3;
  if (n === 0 || mesh.triangles.length === 0) throw new RigError('the model has no triangles to rig');
  const g = yield* buildGraph(mesh);
  const all = yield* pieces(g);
  const joints: Joint[] = [];
  const blend: Blend = { joint: new Int32Array(g.count).fill(-1), other: new Int32Array(g.count).fill(-1), share: new Float64Array(g.count) };
  const meshVertices = all.reduce((sum, piece) => sum + piece.length, 0);
  const rigid = all.filter((members, i) => i > 0 && members.length < meshVertices * MIN_PIECE_SHARE);
  for (const members of all) {
    if (rigid.includes(members)) continue;
    yield* skeletonOf(g, members, joints, blend, joints.length > 0 ? nearestJoint(joints, centreOf(g, members)) : -1);
  }
  if (joints.length === 0) throw new RigError('the model has no triangle with three distinct corners');
  for (const members of rigid) {
    const j = nearestJoint(joints, centreOf(g, members));
    for (const v of members) blend.joint[v] = j;
  }

  const jointsOf = new Uint16Array(n * 4);
  const weightsOf = new Float32Array(n * 4);
  for (let i = 0; i < n; i++) {
    if (tick()) yield;
    const w = g.weldOf[i]!;
    // A vertex of no triangle (points, lines) follows the joint nearest to it.
    jointsOf[i * 4] = blend.joint[w]! >= 0 ? blend.joint[w]! : nearestJoint(joints, [g.pos[w * 3]!, g.pos[w * 3 + 1]!, g.pos[w * 3 + 2]!]);
    weightsOf[i * 4] = 1;
    if (blend.other[w]! >= 0 && blend.share[w]! > 0) {
      jointsOf[i * 4 + 1] = blend.other[w]!;
      weightsOf[i * 4 + 1] = Math.fround(blend.share[w]!);
      weightsOf[i * 4] = Math.fround(1 - weightsOf[i * 4 + 1]!);
    }
  }
  return { joints, jointsOf, weightsOf };
}
