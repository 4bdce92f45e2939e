/**
 * Retry schedule of webhook deliveries (pure): exponential from WEBHOOK_RETRY_BASE_MS, doubling
 * per failed attempt, capped at WEBHOOK_RETRY_CAP_MS, with 20 % jitter so that the deliveries of
 * one outage do not come back in lock-step. Below the cap the jitter is upward (the first retry
 * waits at least the base, 30 s by default); at the cap it is downward (never above the cap).
 */
export interface BackoffSettings {
  baseMs: number;
  capMs: number;
}

const JITTER = 0.2;

/**
 * Delay before the next attempt after `failedAttempts` failed attempts (1 = the first attempt
 * failed). `random` returns a number in [0, 1) and is injectable for tests.
 */
export function retryDelayMs(failedAttempts: number, s: BackoffSettings, random: () => number = Math.random): number {
  const n = Math.max(1, Math.floor(failedAttempts));
  // 2 ** 60 is far past any cap; the exponent is bounded so the product stays finite.
  const exponential = Math.min(s.capMs, s.baseMs * 2 ** Math.min(n - 1, 60));
  const r = Math.min(Math.max(random(), 0), 1);
  const spread = exponential * JITTER;
  const delay = exponential < s.capMs ? Math.min(s.capMs, exponential + r * spread) : s.capMs - r * spread;
  return Math.max(1, Math.round(delay));
}
