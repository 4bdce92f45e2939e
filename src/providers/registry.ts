/**
 * Which provider does each operation's work: built once from the validated providers file
 * (decisions.md section 5). Live keys: link.preview always runs on the built-in fetcher; with a
 * file, each mapped operation runs on its provider and an unmapped one is not offered (400
 * OPERATION_UNAVAILABLE); without one, what this machine can do (machine-file.ts: its installed
 * local engines). Simulated work for live keys only with SIMULATE_LIVE=true (staging servers and
 * black-box test rigs): then an unmapped operation runs on the simulated provider, and without a
 * file every paid operation does, as before test mode. Test keys: every operation on the
 * simulated provider (docs/decisions.md "Test mode").
 *
 * A route owns everything that depends on the provider: its name (personal keys are stored under
 * it), the model, the price (the file's parameters replace the built-in price book) and the number
 * of checkpointed steps a job runs in.
 */
import type { Logger } from 'pino';
import type { LocalEngines } from './local/engines.js';
import { createEgress } from '../egress/client.js';
import type { Egress } from '../egress/types.js';
import type { OperationContract } from '../operations/contract.js';
import type { OperationId } from '../operations/ids.js';
import { OPERATIONS } from '../operations/registry.js';
import { linkPreviewProvider } from './link-preview-provider.js';
import { addPrices, costOfUsage } from '../operations/pricing.js';
import { priceFromParams } from '../operations/registry.js';
import type { ProvidersFile } from './providers-file.js';
import { PROVIDER_KINDS, type ProviderType } from './kinds.js';
import { createSimulatedProvider, SIMULATED_DEFAULT_DELAY_MS } from './simulated.js';
import { machineProvidersFile } from './machine-file.js';
import { voiceAwareSchema } from './voices.js';
import type { AdapterContext, OperationRoute, Provider } from './types.js';
import type { Mode } from '../lib/livemode.js';

export interface RegistryOptions {
  /** The local engines' programs found at start-up (probed only when the file maps an engine). */
  engines?: LocalEngines;
  /** Builds the egress client of a private-network provider (tests may substitute it). */
  privateEgress?: () => Egress;
  /** SIMULATED_DELAY_MS: how long simulated work takes when its text gives no `[sim:delay=…]`. */
  simulatedDelayMs?: number;
  /** SIMULATE_LIVE: live keys run operations without a real provider on the simulated provider. */
  simulateLive?: boolean;
}

export class ProviderRegistry {
  private readonly routes = new Map<OperationId, OperationRoute>();
  private readonly testRoutes = new Map<OperationId, OperationRoute>();
  private readonly ownEgresses: Egress[] = [];

  readonly engines: LocalEngines;
  /** SIMULATE_LIVE: live keys may run simulated work (never in production). */
  readonly simulateLive: boolean;
  private readonly simulated: Provider;

  constructor(
    readonly file: ProvidersFile | undefined,
    egress: Egress,
    log: Logger,
    options: RegistryOptions = {},
  ) {
    this.engines = options.engines ?? {};
    this.simulated = createSimulatedProvider({ defaultDelayMs: options.simulatedDelayMs ?? SIMULATED_DEFAULT_DELAY_MS });
    const privateEgress = options.privateEgress ?? (() => createEgress({ allowCidrs: ['0.0.0.0/0', '::/0'] }));
    this.simulateLive = options.simulateLive ?? false;
    // What live keys run on: the file, else (unless simulating) what this machine can do.
    const live = file ?? (this.simulateLive ? undefined : machineProvidersFile(this.engines));
    const adapters = new Map<string, Provider>();
    for (const spec of live?.providers.values() ?? []) {
      const make = PROVIDER_KINDS[spec.type].adapter;
      if (!make) continue;
      let providerEgress = egress;
      if (spec.privateNetwork) {
        providerEgress = privateEgress();
        this.ownEgresses.push(providerEgress);
      }
      const ctx: AdapterContext = { egress, providerEgress, log };
      adapters.set(spec.name, make(spec, ctx));
    }
    for (const op of OPERATIONS) {
      const route = this.resolve(op, live, adapters, egress, log);
      if (route) this.routes.set(op.id, route);
      this.testRoutes.set(op.id, builtIn(op, 'simulated', this.simulated, false));
    }
  }

  private resolve(op: OperationContract, live: ProvidersFile | undefined, adapters: Map<string, Provider>, egress: Egress, log: Logger): OperationRoute | undefined {
    if (op.id === 'link.preview') {
      return builtIn(op, 'link-preview', linkPreviewProvider(egress), false);
    }
    const spec = live?.operations.get(op.id);
    if (!spec) {
      // The file's "fallback" is refused at start-up without SIMULATE_LIVE (config.ts).
      return this.simulateLive ? builtIn(op, 'simulated', this.simulated, true) : undefined;
    }
    const provider = live!.providers.get(spec.provider);
    const type: ProviderType = provider?.type ?? 'simulated';
    const kind = PROVIDER_KINDS[type];
    // A remote provider's adapter serves all its routes; a local engine is built per route; the
    // simulated provider is the registry's own.
    const adapter = kind.routeAdapter
      ? kind.routeAdapter({ egress, log, engines: this.engines, spec, adapters, providers: live!.providers, operations: live!.operations })
      : kind.remote
        ? adapters.get(spec.provider)
        : this.simulated;
    if (!adapter) throw new Error(`providers file: ${op.id} maps to ${spec.provider}, which has no adapter`);
    const params = spec.price;
    const ownPrice = params ? (input: Record<string, unknown>) => priceFromParams(params, op.id, input, spec.timeoutSeconds, adapter.maximumQuantities?.(op, input)) : (input: Record<string, unknown>) => op.price(input);
    return {
      operation: op,
      providerName: spec.provider,
      providerType: type,
      personalKeys: kind.personalKeys,
      model: spec.model ?? null,
      adapter,
      spec,
      ...(provider ? { provider } : {}),
      // Work the adapter does on another route (video.edit's plan of a prompt) adds that route's price.
      price: adapter.addedPrice ? (input) => addPrices(ownPrice(input), adapter.addedPrice!(op, input)) : ownPrice,
      charge: params ? (used, maximum) => costOfUsage(params, used, maximum) : (_used, maximum) => maximum,
      steps: (input) => adapter.steps?.(op, input) ?? op.steps(input),
      inputSchema: voiceAwareSchema(op, adapter, spec, adapter.inputSchema?.(op, spec) ?? op.inputSchema),
    };
  }

  /**
   * The route of an operation in a mode, or undefined when this deployment does not offer it
   * there. Test mode runs every operation on the simulated provider, whatever the file maps
   * (decisions.md "Test mode"): nothing a test key does reaches a provider or an engine.
   */
  route(opId: string, mode: Mode): OperationRoute | undefined {
    return (mode === 'test' ? this.testRoutes : this.routes).get(opId as OperationId);
  }

  /** True when the deployment offers the operation in the mode (GET /v1/tools lists it). */
  offers(opId: string, mode: Mode): boolean {
    return (mode === 'test' ? this.testRoutes : this.routes).has(opId as OperationId);
  }

  /** True when live keys run every paid operation on the simulated provider (no file, SIMULATE_LIVE). */
  get allSimulated(): boolean {
    return this.file === undefined && this.simulateLive;
  }

  async close(): Promise<void> {
    await Promise.all(this.ownEgresses.map((e) => e.close()));
  }
}

function builtIn(op: OperationContract, name: 'simulated' | 'link-preview', adapter: Provider, personalKeys: boolean): OperationRoute {
  return {
    operation: op,
    providerName: name,
    providerType: name,
    personalKeys,
    model: null,
    adapter,
    price: (input) => op.price(input),
    // The built-in price book has no usage figures: the adapter reports its own cost.
    charge: (_used, maximum) => maximum,
    steps: (input) => adapter.steps?.(op, input) ?? op.steps(input),
    inputSchema: voiceAwareSchema(op, adapter, undefined, op.inputSchema),
  };
}
