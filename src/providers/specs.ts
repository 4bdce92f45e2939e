/**
 * What a validated providers file holds: its providers and each operation's entry (checked by
 * provider-entry.ts and route-entry.ts). Types only, so that adapters and the loader can share them
 * without importing each other.
 */
import type { OperationId } from '../operations/ids.js';
import type { PriceParams } from '../operations/pricing.js';
import type { ImageSize } from './openai-models.js';
import type { Secret } from './secret.js';

export type ProviderType = 'openai' | 'replicate' | 'local' | 'simulated';

export interface ProviderSpec {
  name: string;
  type: ProviderType;
  /** API base (openai, replicate), without a trailing slash. */
  baseUrl?: string;
  /** The operator's key, from the environment variable the file names. */
  apiKey?: Secret;
  apiKeyEnv?: string;
  /** The operator allows this provider on a private or loopback address. */
  privateNetwork: boolean;
  /** How media inputs reach a replicate model: a signed download URL (default) or a data URI. */
  mediaInputs: 'url' | 'dataUri';
  /** Deadline of one HTTP call to the provider (ms). */
  requestTimeoutMs: number;
  /** Retries of one call after 429 or 5xx, inside an attempt. */
  maxRetries: number;
}

export interface OperationRouteSpec {
  operationId: OperationId;
  provider: string;
  model?: string;
  engine?: string;
  /** replicate: the model input, with "{{field}}" strings replaced by input fields. */
  input?: Record<string, unknown>;
  price?: PriceParams;
  /** speech.generate on openai: the voice used when the input names none. */
  voice?: string;
  /** Longest a prediction may run before it is cancelled (the bound of perPredictSecondMillicents). */
  timeoutSeconds: number;
  /** Pause between two polls of a prediction (ms). */
  pollIntervalMs: number;
  /** sprites engine: the provider that draws the frames (one of the file that can make images, or "simulated"). */
  frames?: string;
  /** ffmpeg engine: the longest output (s); longer results are cut there (the bound of perSecondMillicents). */
  maxOutputSeconds: number;
  /** image.generate on openai: the sizes the model generates (replacing the built-in table of model families). */
  sizes?: ImageSize[];
  /** image.generate on openai: the most images one request may ask for (`n`). */
  maxImagesPerRequest?: number;
}

export type SimulatedMode = 'off' | 'fallback';

export interface ProvidersFile {
  simulated: SimulatedMode;
  providers: Map<string, ProviderSpec>;
  operations: Map<OperationId, OperationRouteSpec>;
}
