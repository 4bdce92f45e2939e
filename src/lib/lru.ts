/**
 * A Map used as a bounded least-recently-used cache: Maps keep insertion order, so moving a key
 * to the end on every use leaves the least recently used first, and that one goes when the map
 * grows past `max`.
 */
export function remember<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value!);
}
