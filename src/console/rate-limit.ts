/**
 * Attempt limits of console sign-in and of sign-in link issuing (issue 35). Fixed windows counted
 * in this process's memory, on the service clock: they slow down guessing and link flooding
 * through one API process; the tokens' 256 random bits are what makes guessing hopeless. Several
 * API processes each allow the limit (docs/console.md). One limiter set per Deps (per app).
 */
import type { Deps } from '../deps.js';
import { AppError } from '../http/errors.js';

export interface WindowLimit {
  /** Named in the refusal's details.limit. */
  name: string;
  max: number;
  windowMs: number;
}

/** Sign-in attempts (good or bad) per client address. */
export const SIGN_IN_LIMIT: WindowLimit = { name: 'CONSOLE_SIGN_IN', max: 10, windowMs: 60_000 };
/** Sign-in links issued per user through the admin API. */
export const LINK_ISSUE_LIMIT: WindowLimit = { name: 'CONSOLE_SIGN_IN_LINKS', max: 5, windowMs: 15 * 60_000 };

const MAX_TRACKED = 10_000;

class WindowCounter {
  private readonly counts = new Map<string, { start: number; count: number }>();

  constructor(private readonly limit: WindowLimit) {}

  /** Counts one attempt; an AppError 429 when the window is full. */
  hit(subject: string, now: number): AppError | undefined {
    const { max, windowMs, name } = this.limit;
    let entry = this.counts.get(subject);
    if (!entry || now - entry.start >= windowMs) {
      if (this.counts.size >= MAX_TRACKED) this.sweep(now);
      entry = { start: now, count: 0 };
      this.counts.set(subject, entry);
    }
    if (entry.count >= max) {
      const retryAfter = Math.max(1, Math.ceil((entry.start + windowMs - now) / 1000));
      return new AppError('RATE_LIMITED', { message: `Too many attempts; try again in ${retryAfter} s.`, retryAfter, details: { limit: name, resetsAt: new Date(entry.start + windowMs).toISOString() } });
    }
    entry.count += 1;
    return undefined;
  }

  private sweep(now: number): void {
    for (const [subject, e] of this.counts) if (now - e.start >= this.limit.windowMs) this.counts.delete(subject);
    // Still full of live windows: start over rather than grow without bound.
    if (this.counts.size >= MAX_TRACKED) this.counts.clear();
  }
}

const limiters = new WeakMap<Deps, Map<string, WindowCounter>>();

/** Counts an attempt against `limit` for `subject`; throws 429 RATE_LIMITED when it is used up. */
export function enforceLimit(deps: Deps, limit: WindowLimit, subject: string): void {
  let set = limiters.get(deps);
  if (!set) limiters.set(deps, (set = new Map()));
  let counter = set.get(limit.name);
  if (!counter) set.set(limit.name, (counter = new WindowCounter(limit)));
  const refusal = counter.hit(subject, deps.clock.now());
  if (refusal) throw refusal;
}
