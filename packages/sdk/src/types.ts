/**
 * Friendly names for the types generated from /openapi.json (generated/openapi.ts, made by
 * `npm run generate -w workspace-automation-sdk`): one per resource, and the exact input and
 * result of every Tool operation.
 */
import type { components, operations } from './generated/openapi.js';

type Schemas = components['schemas'];
type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;
/** `data` of the success envelope of an operation (by its operationId in the document). */
export type ResponseData<Id extends keyof operations, Status extends keyof operations[Id]['responses'] = 200 & keyof operations[Id]['responses']> =
  JsonOf<operations[Id]['responses'][Status]> extends { data: infer D } ? D : never;

/** Every Tool operation identifier. */
export type OperationId = {
  [K in keyof Schemas]: K extends `${infer Op}.request` ? Op : never;
}[keyof Schemas];

/** The input of an operation, exactly as its contract takes it. */
export type OperationInput<Op extends OperationId> = Schemas[`${Op}.input`];
/** The result of an operation: the `result` of a synchronous run and the complete output of its job. */
export type OperationResult<Op extends OperationId> = Schemas[`${Op}.result`];
/** A request body of estimates and runs. */
export type OperationRequest = Schemas[`${OperationId}.request`];

export type Workspace = ResponseData<'PUBLIC_WORKSPACES_LIST'>['items'][number];
export type Tool = ResponseData<'PUBLIC_TOOLS_LIST'>['items'][number];
export type Estimate = ResponseData<'PUBLIC_TOOLS_ESTIMATE'>;
/** 200: a synchronous operation ran (`kind: 'result'`). */
export type ImmediateRun<Op extends OperationId = OperationId> = Omit<ResponseData<'PUBLIC_TOOLS_RUN', 200>, 'result'> & { result: OperationResult<Op> | null };
/** 202: a queued operation became a job (`kind: 'job'`). */
export type QueuedRun = ResponseData<'PUBLIC_TOOLS_RUN', 202>;
export type RunResponse<Op extends OperationId = OperationId> = ImmediateRun<Op> | QueuedRun;
export type Job = ResponseData<'PUBLIC_JOBS_GET'>;
export type JobStatus = Job['status'];
export type JobSummary = ResponseData<'PUBLIC_JOBS_LIST'>['items'][number];
export type OutputPage = ResponseData<'PUBLIC_JOBS_OUTPUT'>;
export type Queue = ResponseData<'PUBLIC_QUEUE_GET'>;
export type Balance = ResponseData<'PUBLIC_BALANCE_GET'>;
export type Allocation = Balance['allocations'][number];
export type Transaction = ResponseData<'PUBLIC_TRANSACTIONS_LIST'>['items'][number];
export type MediaItem = ResponseData<'PUBLIC_MEDIA_GET'>;
export type MediaDownload = ResponseData<'PUBLIC_MEDIA_DOWNLOAD'>;
/** A workspace voice made by voice.clone; speech.generate speaks with it as `voiceId` (issue 37). */
export type Voice = ResponseData<'PUBLIC_VOICES_GET'>;
export type VoiceDeleted = ResponseData<'PUBLIC_VOICES_DELETE'>;
export type Usage = ResponseData<'PUBLIC_USAGE_GET'>;
/** GET /v1/costs: spending per UTC bucket, grouped, with totals. */
export type CostReport = ResponseData<'PUBLIC_COSTS_GET'>;
export type CostLine = CostReport['totals']['lines'][number];
/** GET /v1/usage/history: usage points and 429s per UTC minute, hour or day. */
export type UsageHistory = ResponseData<'PUBLIC_USAGE_HISTORY_GET'>;
export type EventPage = ResponseData<'PUBLIC_EVENTS_LIST'>;
/** A workspace event: a feed entry and the JSON body of a webhook delivery. */
export type ServiceEvent = EventPage['items'][number];
/** POST /v1/test/webhook-events (test keys only): the sample event and how many test webhooks it was queued for. */
export type TestEventSent = ResponseData<'PUBLIC_TEST_WEBHOOK_EVENTS_CREATE'>;
export type EventType = TestEventSent['event']['type'];
export type Webhook = ResponseData<'PUBLIC_WEBHOOKS_LIST'>['items'][number];
export type WebhookWithSecret = ResponseData<'PUBLIC_WEBHOOKS_CREATE'>;
export type WebhookCreate = NonNullable<operations['PUBLIC_WEBHOOKS_CREATE']['requestBody']>['content']['application/json'];
export type WebhookUpdate = NonNullable<operations['PUBLIC_WEBHOOKS_UPDATE']['requestBody']>['content']['application/json'];
export type WebhookDelivery = ResponseData<'PUBLIC_WEBHOOKS_DELIVERIES'>['items'][number];

/** A page of a cursor-paged list. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface PageParams {
  /** 1 to 100 (default 25). */
  limit?: number;
  cursor?: string;
}

export const TERMINAL_STATUSES: readonly JobStatus[] = ['completed', 'failed', 'cancelled'];
export function isTerminal(status: string): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}
