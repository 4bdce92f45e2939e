/**
 * Who does the paid work. A provider runs one attempt of a job: it resumes after the steps a
 * previous attempt checkpointed, reports progress, checkpoints each completed step with its cost
 * (committed consumption, never charged again), honours cancellation through `signal`, and
 * returns the public result plus any files. Nothing outside src/providers knows wire formats.
 */
import type { TSchema } from 'typebox';
import type { OperationContract } from '../operations/contract.js';
import type { Quantities } from '../operations/pricing.js';
import type { Logger } from 'pino';
import type { Egress } from '../egress/types.js';
import type { Price } from '../operations/contract.js';
import type { LocalEngines } from './local/engines.js';
import type { OperationRouteSpec, ProviderSpec, ProviderType } from './specs.js';
import type { ImageSize } from './openai-models.js';
import type { OperationId } from '../operations/ids.js';

export interface ProducedFile {
  /** The top-level result field the file goes in. */
  field: string;
  /** Position when the field is a list of files; absent for a single file. */
  index?: number;
  name: string;
  mimeType: string;
  bytes: Buffer;
}

export interface StepCheckpoint {
  /** Steps completed so far in total (over all attempts). */
  stepsDone: number;
  /** Cost of the step(s) just completed. */
  costMillicents: number;
  /** Provider state needed to resume (private, never returned). */
  state?: Record<string, unknown>;
  /** Files finished by this step (stored at once, so a resumed attempt keeps them). */
  files?: ProducedFile[];
}

export interface ProviderRun {
  jobId: string;
  workspaceId: string;
  operation: OperationContract;
  input: Record<string, unknown>;
  attempt: number;
  stepsTotal: number;
  /** Steps already completed by earlier attempts (resume after them). */
  stepsDone: number;
  /** State saved with the last checkpoint. */
  state: Record<string, unknown>;
  /** Files stored by checkpoints so far (earlier attempts and this one), readable with `media.read`. */
  checkpointedFiles(): { field: string; index?: number; mediaId: string }[];
  /** Cost already committed by checkpoints of earlier attempts. */
  maximumMillicents: number;
  signal: AbortSignal;
  /** Where the job runs: provider name and type, model, the file's entry and prices. */
  route: OperationRoute;
  /** Who pays: the workspace's credits, or its own key at the provider (personal funding). */
  funding: 'credits' | 'provider_key';
  /**
   * The key for the provider call: the workspace's own key when it funds the job, else the
   * operator's. Decrypted for this attempt only; never stored, logged or put in a result or error.
   */
  apiKey: string | undefined;
  /** Workspace media the input references: signed URLs and bytes, for adapters that send them. */
  media: MediaAccess;
  /**
   * The workspace voice the input names (speech.generate `voiceId`), read when the attempt starts;
   * its reference audio is a media item of the job's workspace, readable with `media`. Only routes
   * whose adapter takes voices (`takesVoices`) are ever given one: admission refuses the others.
   */
  voice?: VoiceReference;
  /** True while `hostname` is a domain verified in the job's workspace (checked again at run time). */
  isVerifiedHost(hostname: string): Promise<boolean>;
  /** The cost of `used` at the route's prices, capped at this attempt's maximum. */
  charge(used: Quantities): number;
  /** Progress 0..100; throws if the job may no longer be changed by this attempt. */
  progress(percentage: number): Promise<void>;
  /** Persists a completed step; throws if the job may no longer be changed by this attempt. */
  checkpoint(step: StepCheckpoint): Promise<void>;
  /**
   * Set when the caller streams the reply (a chat run answered as server-sent events, an MCP call
   * with progress): an adapter that can stream hands it each piece of the reply's text as it is
   * generated, in order (their concatenation is the result's text). The result and its cost are
   * the same as without it. Adapters that cannot stream ignore it.
   */
  onText?: (delta: string) => void;
}

export interface MediaAccess {
  /** A signed download URL of a media item of the job's workspace (works without an API key until it expires). */
  signedUrl(mediaId: string): Promise<string>;
  /** The bytes, MIME type and SHA-256 (hex, of the bytes) of a media item of the job's workspace. */
  read(mediaId: string): Promise<{ bytes: Buffer; mimeType: string; sha256: string }>;
}

/** A workspace voice as an adapter speaks with it (docs/decisions.md "Voices"). */
export interface VoiceReference {
  id: string;
  name: string;
  /** The reference audio: a media item of the job's workspace. */
  referenceMediaId: string;
  /** Hex SHA-256 of the reference audio, as stored when the voice was made. */
  referenceSha256: string;
  /** The provider (its name in the providers file) and model that cloned it. */
  provider: string;
  model: string | null;
  /** That provider's own id of the clone, when it returned one. */
  providerVoiceId: string | null;
}

export interface ProviderResult {
  data: Record<string, unknown>;
  files: ProducedFile[];
  /** Cost of work in this attempt not already reported through checkpoints. */
  costMillicents: number;
}

/** A failure of the work itself. `consumedMillicents` is work done that is still charged. */
export class ProviderError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly consumedMillicents = 0,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

/** What an adapter needs to stop a job's remote work from outside its attempt (a user's cancel). */
export interface RemoteCancel {
  jobId: string;
  workspaceId: string;
  operation: OperationContract;
  input: Record<string, unknown>;
  attempt: number;
  /** The state the running attempt checkpointed (a prediction id). */
  state: Record<string, unknown>;
  route: OperationRoute;
  apiKey: string | undefined;
}

export interface Provider {
  /** The adapter kind (simulated, link-preview, openai, replicate, local). */
  name: string;
  /**
   * Stops the remote work a running attempt started (the job is being cancelled) and returns
   * what the provider reports as consumed; undefined when there is nothing remote to stop or the
   * provider could not be asked. Adapters without remote work that outlives a call omit it.
   */
  cancel?(job: RemoteCancel): Promise<Quantities | undefined>;
  /** Checkpointed steps a job of `op` with `input` runs in; the operation's own count when absent. */
  steps?(op: OperationContract, input: Record<string, unknown>): number;
  /**
   * The input schema this adapter honours (served by GET /v1/tools and enforced on estimates,
   * runs and retries), when it is narrower than the operation's (a field it cannot honour is
   * left out or made required, a voice list of its own); the operation's schema when absent.
   * `entry` is the route's entry in the providers file (its model may narrow the input further).
   */
  inputSchema?(op: OperationContract, entry?: OperationRouteSpec): TSchema;
  /**
   * The most a run can consume when the adapter itself bounds it beyond what the input says (an
   * engine that cuts its output at a length); replaces the operation's bound for its quantities.
   */
  maximumQuantities?(op: OperationContract, input: Record<string, unknown>): Quantities;
  /**
   * Work a run of `input` does on another route, priced at that route's prices (video.edit's plan
   * of a prompt, asked of the chat.generate route): added to the route's own price, so the maximum
   * bounds both parts. The adapter charges that part itself. Undefined: no such work.
   */
  addedPrice?(op: OperationContract, input: Record<string, unknown>): Price | undefined;
  /**
   * Fields of the operation's input this route cannot honour as configured, each refused with what
   * the operator must configure so it can (checked at admission before the input schema, whose
   * generic refusal would not say it): a video.edit `prompt` without a chat model.
   */
  refuseInput?(op: OperationContract, input: Record<string, unknown>): { pointer: string; message: string }[];
  /**
   * A chat completion whose answer is JSON constrained by `request.schema` (OpenAI's structured
   * output): openai providers only. `job` is a chat.generate run whose `charge` prices its usage.
   */
  structuredChat?(job: ProviderRun, request: StructuredChatRequest): Promise<StructuredChatAnswer>;
  /**
   * The sizes the route's image model generates, when it takes fixed sizes (OpenAI's image
   * models); undefined: any size image.generate allows. The sprites engine asks for frames at one.
   */
  imageSizes?(entry: OperationRouteSpec): readonly ImageSize[] | undefined;
  /**
   * image.generate on this route is drawn from `referenceMediaIds` (a model with an edit endpoint;
   * a model input template that uses them). Absent: when its input schema takes them.
   */
  takesReferenceImages?(entry: OperationRouteSpec): boolean;
  /**
   * speech.generate on this route can speak with a workspace voice (`voiceId`): a model that takes
   * reference (speaker) audio. Absent or false: the route's input schema leaves `voiceId` out and
   * admission refuses it (providers/voices.ts).
   */
  takesVoices?(entry?: OperationRouteSpec): boolean;
  run(job: ProviderRun): Promise<ProviderResult>;
}

/**
 * The abort reason of an attempt interrupted by a stopping worker (graceful shutdown): the job is
 * not cancelled, and the attempt recovered after the lease expires takes it over, so remote work
 * already paid for (a prediction) is left running for it to attach to.
 */
export class WorkerShutdown extends Error {
  constructor() {
    super('the worker is stopping');
    this.name = 'WorkerShutdown';
  }
}

/**
 * The abort reason of a synchronous run whose client went away while its reply streamed: the
 * provider call is stopped and the job is cancelled, charged what the provider had consumed.
 */
export class ClientGone extends Error {
  constructor() {
    super('the client closed the connection');
    this.name = 'ClientGone';
  }
}

/**
 * Thrown by an adapter whose call was stopped by its caller (a client gone, a synchronous run's
 * deadline) after the provider had done part of the work: `consumedMillicents` is what that part
 * costs, charged with the cancelled or failed job.
 */
export class ProviderInterrupted extends ProviderError {
  constructor(consumedMillicents: number) {
    super('PROVIDER_INTERRUPTED', 'The provider call was stopped before it finished.', consumedMillicents);
    this.name = 'ProviderInterrupted';
  }
}

export interface OperationRoute {
  operation: OperationContract;
  /** The provider's name in the file ("simulated", "link-preview" for the built-in ones): results carry it, personal keys are stored under it. */
  providerName: string;
  providerType: ProviderType | 'link-preview';
  /** A workspace may fund jobs of this route with its own key stored under `providerName`. */
  personalKeys: boolean;
  model: string | null;
  adapter: Provider;
  /** The file's entry for the operation, when it has one. */
  spec?: OperationRouteSpec;
  /** The provider's entry in the file, when it is declared there. */
  provider?: ProviderSpec;
  /** Estimated and bounded maximum cost of a run. */
  price(input: Record<string, unknown>): Price;
  /** The cost of what a run consumed, at this route's prices, capped at `maximumMillicents`. */
  charge(used: Quantities, maximumMillicents: number): number;
  /** Checkpointed steps a job runs in. */
  steps(input: Record<string, unknown>): number;
  /** The input schema this route honours (GET /v1/tools serves it; estimates, runs and retries are checked against it). */
  inputSchema: TSchema;
}

/** What adapters are built with. */
export interface AdapterContext {
  /** The guarded client under the public-address rule (files a provider hands out on other origins). */
  egress: Egress;
  /** The client for the provider's own origin: private addresses allowed when the file says `privateNetwork`. */
  providerEgress: Egress;
  log: Logger;
}

/** What a local engine is built with: its entry in the file, the programs found, and the other adapters. */
export interface LocalContext {
  egress: Egress;
  log: Logger;
  engines: LocalEngines;
  spec: OperationRouteSpec;
  /** Adapters of the file's remote providers by name (the sprites engine draws frames on one). */
  adapters: ReadonlyMap<string, Provider>;
  providers: ReadonlyMap<string, ProviderSpec>;
  /** The file's other entries by operation (the ffmpeg engine plans a prompt on chat.generate's). */
  operations: ReadonlyMap<OperationId, OperationRouteSpec>;
}

/** A chat request whose answer must be JSON valid against `schema` (Provider.structuredChat). */
export interface StructuredChatRequest {
  messages: { role: 'system' | 'user'; content: string }[];
  /** The bound of the answer's tokens (max_tokens). */
  maxTokens: number;
  /** The schema's name in the request (letters, digits, _ and -, up to 64). */
  name: string;
  /** The JSON Schema of the answer (an object); the adapter renders it in the provider's dialect. */
  schema: Record<string, unknown>;
}

export interface StructuredChatAnswer {
  /** The answer parsed as JSON; undefined when it is not JSON (cut off at maxTokens, refused). */
  value: unknown;
  /** The model declined to answer (OpenAI's `refusal`). */
  refused: boolean;
  finishReason: string | null;
  /** Tokens charged: the reported usage, or without figures the request's bounds. */
  inputTokens: number;
  outputTokens: number;
  /** What the call costs (`job.charge` of its tokens). */
  costMillicents: number;
}
