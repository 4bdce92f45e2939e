/**
 * What live keys get without a providers file (docs/decisions.md "Test mode"): what this machine
 * can really do. link.preview is always offered (the registry's own fetcher); each local engine
 * whose programs were found at start-up serves its operation (ffmpeg: video.edit, espeak-ng:
 * speech.generate, the scanner: security.scan, the rigger: three-d.rig) at the built-in price book. Every other operation
 * is not offered to live keys (400 OPERATION_UNAVAILABLE) until a providers file maps it; test keys
 * run everything on the simulated provider regardless. The sprites engine is left out: it draws
 * its frames on another provider, which a machine without a file does not have.
 */
import type { OperationId } from '../operations/ids.js';
import type { LocalEngines } from './local/engines.js';
import { LOCAL_ENGINES } from './local/index.js';
import { DEFAULT_MAX_OUTPUT_SECONDS, DEFAULT_POLL_INTERVAL_MS, DEFAULT_PREDICTION_TIMEOUT_S } from './route-entry.js';
import type { OperationRouteSpec, ProvidersFile } from './specs.js';

/** The provider name of the machine's own engines in routes, logs and results. */
export const MACHINE_PROVIDER = 'local';

/** The providers file this machine implies: its installed local engines, nothing simulated. */
export function machineProvidersFile(engines: LocalEngines): ProvidersFile {
  const operations = new Map<OperationId, OperationRouteSpec>();
  for (const [engine, row] of Object.entries(LOCAL_ENGINES)) {
    if (engine === 'sprites' || !row.programs.every((program) => engines[program])) continue;
    operations.set(row.serves, {
      operationId: row.serves,
      provider: MACHINE_PROVIDER,
      engine,
      timeoutSeconds: DEFAULT_PREDICTION_TIMEOUT_S,
      pollIntervalMs: DEFAULT_POLL_INTERVAL_MS,
      maxOutputSeconds: DEFAULT_MAX_OUTPUT_SECONDS,
    });
  }
  const local = { name: MACHINE_PROVIDER, type: 'local' as const, privateNetwork: false, mediaInputs: 'url' as const, requestTimeoutMs: 60_000, maxRetries: 0 };
  return { simulated: 'off', providers: new Map([[MACHINE_PROVIDER, local]]), operations };
}
