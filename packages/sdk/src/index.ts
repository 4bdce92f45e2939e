/**
 * workspace-automation-sdk: a typed client of the Workspace Automation Service public API.
 * Runs wherever fetch and WebCrypto do (Node 20+, browsers, Deno, workers); the Node entry
 * (`workspace-automation-sdk/node`) adds uploads from a path and node:crypto hashing.
 */
export { createClient, modeOfSecret, paginate, type Client, type ClientOptions, type CallOptions, type KeyedCallOptions, type EventListParams, type EventIterateOptions } from './client.js';
export { verifyWebhook, signWebhook, parseSignatureHeader, type VerifyWebhookOptions } from './webhooks.js';
export {
  WorkspaceAutomationError,
  ServiceError,
  ConnectionError,
  IntegrityError,
  WaitTimeoutError,
  WebhookVerificationError,
  type ServiceErrorCode,
  type WebhookVerificationReason,
} from './errors.js';
export { webCryptoSha256, sha256Hex, type Sha256, type Sha256Factory } from './hash.js';
export type { OutputDocument, OutputReadOptions } from './output.js';
export type { UploadOptions, UploadSource } from './upload.js';
export type { WaitOptions } from './wait.js';
export type { RunStreamOptions, RunStreamEvent, RunDeltaEvent, RunResultEvent } from './run-stream.js';
export type { TransportOptions } from './transport.js';
export { isTerminal } from './types.js';
export type * from './types.js';
export type { paths, components, operations } from './generated/openapi.js';
