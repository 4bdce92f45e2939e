/** Periodic housekeeping run by worker processes: expiring credit allocations. */
import type { Deps } from '../deps.js';
import { sweepExpirations } from '../modules/billing/service.js';

export function startMaintenance(deps: Deps, intervalMs = 60_000): () => void {
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      await sweepExpirations(deps);
    } catch (err) {
      deps.log.error({ err }, 'maintenance sweep failed');
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void tick(), intervalMs);
  timer.unref();
  void tick();
  return () => clearInterval(timer);
}
