/**
 * The mesh as a graph, for the rigger (rig-skeleton.ts): vertices at the same position welded
 * (glTF splits them at UV and normal seams), the triangles' edges weighted by their length in
 * compressed sparse rows, its connected pieces, shortest paths (Dijkstra) and a union-find.
 * Every loop over the mesh is a generator step that yields every YIELD_EVERY iterations (tick),
 * so runSliced can share the thread with the service's other work.
 */

const YIELD_EVERY = 4096;

export interface RigMesh {
  /** xyz per vertex, world space. */
  positions: Float64Array;
  /** Vertex indices, three per triangle. */
  triangles: Uint32Array;
}

/** A mesh the rigger cannot work on; the message says why. */
export class RigError extends Error {}

let steps = 0;
/** True every YIELD_EVERY calls: the hot loops yield when it is. */
export const tick = () => (++steps & (YIELD_EVERY - 1)) === 0;

/** Runs a generator in slices of about `sliceMs`, letting other work run between them; stops on `signal`. */
export async function runSliced<T>(work: Generator<void, T>, signal: AbortSignal, sliceMs = 8): Promise<T> {
  for (;;) {
    const until = performance.now() + sliceMs;
    let step = work.next();
    while (!step.done && performance.now() < until) step = work.next();
    if (step.done) return step.value;
    signal.throwIfAborted();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The welded graph: vertex → welded id, welded positions, and edges in CSR form. */
export interface Graph {
  weldOf: Int32Array;
  count: number;
  pos: Float64Array;
  start: Int32Array;
  next: Int32Array;
  length: Float64Array;
}

function* weld(mesh: RigMesh): Generator<void, { weldOf: Int32Array; count: number; pos: Float64Array }> {
  const n = mesh.positions.length / 3;
  let min = Infinity;
  let max = -Infinity;
  for (const v of mesh.positions) {
    if (!Number.isFinite(v)) throw new RigError('a vertex position is not a finite number');
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const quantum = Math.max(max - min, 1e-12) * 1e-6;
  const ids = new Map<string, number>();
  const weldOf = new Int32Array(n);
  const pos: number[] = [];
  for (let i = 0; i < n; i++) {
    if (tick()) yield;
    const x = mesh.positions[i * 3]!;
    const y = mesh.positions[i * 3 + 1]!;
    const z = mesh.positions[i * 3 + 2]!;
    const key = `${Math.round(x / quantum)},${Math.round(y / quantum)},${Math.round(z / quantum)}`;
    let id = ids.get(key);
    if (id === undefined) {
      id = ids.size;
      ids.set(key, id);
      pos.push(x, y, z);
    }
    weldOf[i] = id;
  }
  return { weldOf, count: ids.size, pos: Float64Array.from(pos) };
}

export function* buildGraph(mesh: RigMesh): Generator<void, Graph> {
  const { weldOf, count, pos } = yield* weld(mesh);
  const tris = mesh.triangles;
  const degree = new Int32Array(count + 1);
  const edge = (t: number, k: number) => weldOf[tris[t * 3 + k]!]!;
  const triangleCount = tris.length / 3;
  for (let t = 0; t < triangleCount; t++) {
    for (let k = 0; k < 3; k++) {
      const a = edge(t, k);
      const b = edge(t, (k + 1) % 3);
      if (a !== b) {
        degree[a]!++;
        degree[b]!++;
      }
    }
  }
  const start = new Int32Array(count + 1);
  for (let v = 0; v < count; v++) start[v + 1] = start[v]! + degree[v]!;
  const fill = start.slice(0, count);
  const next = new Int32Array(start[count]!);
  const length = new Float64Array(start[count]!);
  for (let t = 0; t < triangleCount; t++) {
    if (tick()) yield;
    for (let k = 0; k < 3; k++) {
      const a = edge(t, k);
      const b = edge(t, (k + 1) % 3);
      if (a === b) continue;
      const d = Math.hypot(pos[a * 3]! - pos[b * 3]!, pos[a * 3 + 1]! - pos[b * 3 + 1]!, pos[a * 3 + 2]! - pos[b * 3 + 2]!);
      next[fill[a]!] = b;
      length[fill[a]!++] = d;
      next[fill[b]!] = a;
      length[fill[b]!++] = d;
    }
  }
  return { weldOf, count, pos, start, next, length };
}

/** Connected pieces of the graph, largest first (vertices of no triangle are left out). */
export function* pieces(g: Graph): Generator<void, Int32Array[]> {
  const seen = new Uint8Array(g.count);
  const out: Int32Array[] = [];
  const stack: number[] = [];
  for (let s = 0; s < g.count; s++) {
    if (seen[s] || g.start[s] === g.start[s + 1]) continue;
    const members: number[] = [];
    seen[s] = 1;
    stack.push(s);
    while (stack.length) {
      if (tick()) yield;
      const v = stack.pop()!;
      members.push(v);
      for (let e = g.start[v]!; e < g.start[v + 1]!; e++) {
        const w = g.next[e]!;
        if (!seen[w]) {
          seen[w] = 1;
          stack.push(w);
        }
      }
    }
    out.push(Int32Array.from(members));
  }
  return out.sort((a, b) => b.length - a.length);
}

/** Shortest path lengths from `source` (and each vertex's predecessor on its path), over one piece. */
export function* dijkstra(g: Graph, source: number, dist: Float64Array, pred: Int32Array, members: Int32Array): Generator<void, number> {
  for (const v of members) {
    dist[v] = Infinity;
    pred[v] = -1;
  }
  dist[source] = 0;
  // A binary heap of (distance, vertex); stale entries are skipped when popped.
  const heapD: number[] = [0];
  const heapV: number[] = [source];
  let farthest = source;
  const push = (d: number, v: number) => {
    let i = heapD.length;
    heapD.push(d);
    heapV.push(v);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (heapD[p]! <= d) break;
      heapD[i] = heapD[p]!;
      heapV[i] = heapV[p]!;
      i = p;
    }
    heapD[i] = d;
    heapV[i] = v;
  };
  const pop = (): [number, number] => {
    const top: [number, number] = [heapD[0]!, heapV[0]!];
    const lastD = heapD.pop()!;
    const lastV = heapV.pop()!;
    if (heapD.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= heapD.length) break;
        const c = l + 1 < heapD.length && heapD[l + 1]! < heapD[l]! ? l + 1 : l;
        if (heapD[c]! >= lastD) break;
        heapD[i] = heapD[c]!;
        heapV[i] = heapV[c]!;
        i = c;
      }
      heapD[i] = lastD;
      heapV[i] = lastV;
    }
    return top;
  };
  while (heapD.length > 0) {
    if (tick()) yield;
    const [d, v] = pop();
    if (d > dist[v]!) continue;
    if (d > dist[farthest]!) farthest = v;
    for (let e = g.start[v]!; e < g.start[v + 1]!; e++) {
      const w = g.next[e]!;
      const nd = d + g.length[e]!;
      if (nd < dist[w]!) {
        dist[w] = nd;
        pred[w] = v;
        push(nd, w);
      }
    }
  }
  return farthest;
}

export const find = (parent: Int32Array, v: number): number => {
  while (parent[v] !== v) {
    parent[v] = parent[parent[v]!]!;
    v = parent[v]!;
  }
  return v;
};

