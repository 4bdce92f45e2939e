/**
 * Which provider does each operation's work. Without a configured real provider every paid
 * operation runs on the simulated provider; link.preview always fetches for real.
 */
import type { Deps } from '../deps.js';
import type { OperationContract } from '../operations/contract.js';
import { linkPreviewProvider } from './link-preview-provider.js';
import { simulatedProvider } from './simulated.js';
import type { Provider } from './types.js';

const cache = new WeakMap<Deps, Provider>();

export function providerFor(deps: Deps, op: OperationContract): Provider {
  if (op.id === 'link.preview') {
    let p = cache.get(deps);
    if (!p) {
      p = linkPreviewProvider(deps.egress);
      cache.set(deps, p);
    }
    return p;
  }
  return simulatedProvider;
}

/** Name under which a workspace may store its own key for the provider of `op` (personal funding). */
export function providerNameFor(op: OperationContract): string | null {
  return op.id === 'link.preview' ? null : simulatedProvider.name;
}
