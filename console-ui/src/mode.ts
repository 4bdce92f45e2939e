/**
 * The console's test-mode switch (decisions.md "Test mode"), kept in the address as `?mode=test`
 * so that a reload, the Back button and a shared link keep it. Live is the default (no query).
 * Pages read it as a prop; links made with `consoleHref` keep it.
 */
import type { KeyMode } from './api.js';

/** The mode the address names: `test` only for `?mode=test`. */
export function modeFromLocation(search = window.location.search): KeyMode {
  return new URLSearchParams(search).get('mode') === 'test' ? 'test' : 'live';
}

/** A console path with the mode kept in its query (`?mode=test`, or nothing for live). */
export function consoleHref(path: string, mode: KeyMode, params: Record<string, string | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, v);
  if (mode === 'test') q.set('mode', 'test');
  const qs = q.toString();
  return qs ? `${path}?${qs}` : path;
}

/** The mode query of a console API call (nothing for live, the server's default). */
export const modeQuery = (mode: KeyMode): Record<string, string> => (mode === 'test' ? { mode: 'test' } : {});
