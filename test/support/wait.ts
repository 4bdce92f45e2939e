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

type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/** Polls `check` until it gives a truthy value, and returns that value. */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 60_000, everyMs = 10): Promise<Truthy<T>> {
  const value = await waitUntil(check, (v) => Boolean(v), what, timeoutMs, everyMs);
  return value as Truthy<T>;
}
