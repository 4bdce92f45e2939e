/** Time is injected: domain code asks `deps.clock.now()`; tests move a fake clock instead of sleeping. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests can set and advance. Starts at the real time unless told otherwise. */
export class FakeClock implements Clock {
  private current: number;
  constructor(start: number = Date.now()) {
    this.current = start;
  }
  now(): number {
    return this.current;
  }
  set(ms: number): void {
    this.current = ms;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

export function toIso(ms: number): string;
export function toIso(ms: number | null | undefined): string | null;
export function toIso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

const isoMemo = new Map<number, string>();
const ISO_MEMO_MAX = 256;

/**
 * toIso for instants that many requests share (the ends of usage windows and budget periods):
 * remembered, so the hot path does not format the same date on every request.
 */
export function windowIso(ms: number): string {
  let iso = isoMemo.get(ms);
  if (iso === undefined) {
    if (isoMemo.size >= ISO_MEMO_MAX) isoMemo.clear();
    iso = new Date(ms).toISOString();
    isoMemo.set(ms, iso);
  }
  return iso;
}
