/**
 * Temporary suspension of an authenticated key that keeps asking for what it may not have.
 * Only authorization failures of a key whose secret was valid count, so nobody without the
 * secret can suspend a key. Counting is per process (a sliding window); the suspension itself is
 * written to the key row so every process enforces it.
 */
export const ABUSE_WINDOW_MS = 60_000;
export const ABUSE_THRESHOLD = 30;
export const SUSPENSION_MS = 5 * 60_000;

export class AbuseTracker {
  private readonly failures = new Map<string, number[]>();

  /** Records one failure; returns true when the key crossed the threshold just now. */
  recordFailure(keyId: string, now: number): boolean {
    const since = now - ABUSE_WINDOW_MS;
    const list = (this.failures.get(keyId) ?? []).filter((t) => t > since);
    list.push(now);
    if (list.length >= ABUSE_THRESHOLD) {
      this.failures.delete(keyId);
      return true;
    }
    this.failures.set(keyId, list);
    if (this.failures.size > 10_000) this.prune(since);
    return false;
  }

  private prune(since: number): void {
    for (const [key, list] of this.failures) {
      if (list.every((t) => t <= since)) this.failures.delete(key);
    }
  }
}
