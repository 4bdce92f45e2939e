/**
 * In-memory copies of what every request reads to authorize itself: keys (by secret hash),
 * workspaces and organization roles. Coherence: every write that changes any of them bumps the
 * `auth` epoch in the database in the same transaction and clears this process's cache after
 * commit; every process polls the epoch (see `startEpochPolling`) and clears on change, so a
 * revocation or a lost role is seen everywhere within one poll interval.
 */
import type { ApiKey } from './types.js';
import type { MemberRole, Workspace } from '../accounts/types.js';

const MAX_ENTRIES = 50_000;

class BoundedMap<K, V> extends Map<K, V> {
  override set(key: K, value: V): this {
    if (this.size >= MAX_ENTRIES && !this.has(key)) {
      const oldest = this.keys().next();
      if (!oldest.done) this.delete(oldest.value);
    }
    return super.set(key, value);
  }
}

export class AuthCache {
  /** null = known not to exist. */
  readonly keys = new BoundedMap<string, ApiKey | null>();
  readonly workspaces = new BoundedMap<string, Workspace | null>();
  readonly roles = new BoundedMap<string, MemberRole | null>();
  epoch = -1;

  clear(): void {
    this.keys.clear();
    this.workspaces.clear();
    this.roles.clear();
  }

  /** Called with the epoch read from the database; clears when it moved. */
  observeEpoch(epoch: number): void {
    if (epoch !== this.epoch) {
      this.clear();
      this.epoch = epoch;
    }
  }
}
