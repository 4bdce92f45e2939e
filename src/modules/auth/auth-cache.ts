/**
 * In-memory copies of what every request reads to authorize itself: keys (by secret hash),
 * workspaces and organization roles. Coherence: every write that changes any of them bumps the
 * `auth` epoch in the database in the same transaction and clears this process's cache after
 * commit; every process polls the epoch (`refreshAuthEpoch`) and clears on change, so a
 * revocation or a lost role is seen everywhere within one poll interval.
 *
 * A read that started before a clear must not be cached after it: a request that loaded a key
 * just before its revocation committed would otherwise put the unrevoked copy back into the
 * freshly cleared cache, where it would stay until the next unrelated epoch change. `load`
 * therefore only stores a value when no clear happened while it was being read.
 *
 * Secret hashes that match no key are remembered in their own, smaller map, so a flood of
 * made-up secrets cannot evict the entries of real keys.
 */
import type { ApiKey } from './types.js';
import type { MemberRole, Workspace } from '../accounts/types.js';

const MAX_ENTRIES = 50_000;
const MAX_UNKNOWN_KEYS = 10_000;

export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly maxEntries: number) {
    super();
  }

  override set(key: K, value: V): this {
    if (this.size >= this.maxEntries && !this.has(key)) {
      const oldest = this.keys().next();
      if (!oldest.done) this.delete(oldest.value);
    }
    return super.set(key, value);
  }
}

export class AuthCache {
  /** Keys by the SHA-256 (hex) of their secret. */
  readonly keys = new BoundedMap<string, ApiKey>(MAX_ENTRIES);
  /** Secret hashes known to match no key. */
  readonly unknownKeys = new BoundedMap<string, true>(MAX_UNKNOWN_KEYS);
  /** null = known not to exist. */
  readonly workspaces = new BoundedMap<string, Workspace | null>(MAX_ENTRIES);
  /** `${organizationId}:${userId}` → role; null = not a member. */
  readonly roles = new BoundedMap<string, MemberRole | null>(MAX_ENTRIES);
  /** The database epoch this cache was last checked against. */
  epoch = -1;
  private clears = 0;

  /** Changes on every clear; compare before and after a database read (see `load`). */
  get generation(): number {
    return this.clears;
  }

  clear(): void {
    this.keys.clear();
    this.unknownKeys.clear();
    this.workspaces.clear();
    this.roles.clear();
    this.clears += 1;
  }

  /** Called with the epoch read from the database; clears when it moved. */
  observeEpoch(epoch: number): void {
    if (epoch !== this.epoch) {
      this.clear();
      this.epoch = epoch;
    }
  }

  /**
   * The cached value of `key` in `map`, or `read()`'s result, stored only when the cache was not
   * cleared while `read` ran (so a value older than the clear is never cached after it).
   */
  async load<V>(map: BoundedMap<string, V>, key: string, read: () => Promise<V>): Promise<V> {
    if (map.has(key)) return map.get(key) as V;
    const generation = this.clears;
    const value = await read();
    if (generation === this.clears) map.set(key, value);
    return value;
  }
}
