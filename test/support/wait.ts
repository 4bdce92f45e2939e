/**
 * State waits: a test that must see a state polls for it, with a loaded machine's patience, and
 * fails with the last value it saw; never a fixed sleep it hopes is long enough.
 */

/** Polls `read` until `done` holds; throws with the last value on timeout. */
export async function waitUntil<T>(read: () => T | Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 60_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await read();
    if (done(last)) return last;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
}

/** Polls `check` until it gives a value (not undefined, null or false) and returns that value. */
export async function waitFor<T>(what: string, check: () => T | undefined | null | false | Promise<T | undefined | null | false>, timeoutMs = 60_000, everyMs = 20): Promise<T> {
  const value = await waitUntil(check, (v) => v !== undefined && v !== null && v !== false, what, timeoutMs, everyMs);
  return value as T;
}
