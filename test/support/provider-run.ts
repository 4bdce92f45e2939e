/**
 * One attempt of a remote adapter (openai, replicate) run directly, outside the job worker: the
 * adapter built from a providers file as the registry builds it, and a ProviderRun of the route
 * with the file's prices. For the rules of what an adapter sends and delivers, where no database
 * is involved; money and storage are tested end to end through the worker.
 */
import assert from 'node:assert/strict';
import pino from 'pino';
import type { Egress } from '../../src/egress/types.js';
import { findOperation, priceFromParams } from '../../src/operations/registry.js';
import { openAiProvider } from '../../src/providers/openai.js';
import { costOfUsage } from '../../src/operations/pricing.js';
import { parseProvidersFile } from '../../src/providers/providers-file.js';
import { replicateProvider } from '../../src/providers/replicate.js';
import type { Provider, ProviderResult, ProviderRun, StepCheckpoint } from '../../src/providers/types.js';

export interface AdapterRunOptions {
  /** A providers file (JSON) whose `operationId` entry names the provider to run. */
  file: unknown;
  env?: Record<string, string>;
  operationId: string;
  input: Record<string, unknown>;
  egress: Egress;
  signal?: AbortSignal;
  /** The key sent to the provider (the operator's by default). */
  apiKey?: string;
}

export interface AdapterRun {
  adapter: Provider;
  /** The attempt's outcome; the checkpoints it recorded. */
  result: Promise<ProviderResult>;
  checkpoints: StepCheckpoint[];
  maximumMillicents: number;
}

/** Builds the adapter of the entry's provider and starts one attempt of `operationId`. */
export function runAdapter(o: AdapterRunOptions): AdapterRun {
  const parsed = parseProvidersFile(o.file, o.env ?? {});
  assert.deepEqual(parsed.problems, [], 'the providers file is valid');
  const op = findOperation(o.operationId)!;
  const entry = parsed.file!.operations.get(op.id)!;
  const spec = parsed.file!.providers.get(entry.provider)!;
  const ctx = { egress: o.egress, providerEgress: o.egress, log: pino({ level: 'silent' }) };
  const adapter = spec.type === 'openai' ? openAiProvider(spec, ctx) : replicateProvider(spec, ctx);
  const params = entry.price ?? {};
  const { maximumMillicents } = priceFromParams(params, op.id, o.input, entry.timeoutSeconds);
  const checkpoints: StepCheckpoint[] = [];
  const job: ProviderRun = {
    jobId: 'job',
    workspaceId: 'workspace',
    operation: op,
    input: o.input,
    attempt: 1,
    stepsTotal: 1,
    stepsDone: 0,
    state: {},
    checkpointedFiles: () => [],
    maximumMillicents,
    signal: o.signal ?? new AbortController().signal,
    funding: 'credits',
    apiKey: o.apiKey ?? spec.apiKey?.reveal(),
    route: {
      operation: op,
      providerName: spec.name,
      providerType: spec.type,
      personalKeys: true,
      model: entry.model ?? null,
      adapter,
      spec: entry,
      provider: spec,
      price: (input) => priceFromParams(params, op.id, input, entry.timeoutSeconds),
      charge: (used, maximum) => costOfUsage(params, used, maximum),
      steps: () => 1,
      inputSchema: adapter.inputSchema?.(op, entry) ?? op.inputSchema,
    },
    media: { signedUrl: async () => '', read: async () => ({ bytes: Buffer.alloc(0), mimeType: 'image/png', sha256: '' }) },
    isVerifiedHost: async () => false,
    charge: (used) => costOfUsage(params, used, maximumMillicents),
    progress: async () => {},
    checkpoint: async (step) => {
      checkpoints.push(step);
    },
  };
  return { adapter, result: adapter.run(job), checkpoints, maximumMillicents };
}
