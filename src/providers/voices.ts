/**
 * Which routes speak with workspace voices (issue 37; docs/decisions.md "Voices"). A route takes
 * voices when its adapter says so for its entry (`Provider.takesVoices`: the simulated provider,
 * a Replicate model whose input template names "{{voiceId}}"); every other route's input schema
 * leaves the operation's voice field out, so GET /v1/tools never offers it there and admission
 * refuses it before anything is held (modules/voices/service.ts).
 */
import type { TSchema } from 'typebox';
import type { OperationContract } from '../operations/contract.js';
import type { OperationRouteSpec } from './specs.js';
import { ProviderError, type Provider, type ProviderRun } from './types.js';

/** The route's input schema without the operation's voice field unless the adapter takes voices on it. */
export function voiceAwareSchema(op: OperationContract, adapter: Provider, spec: OperationRouteSpec | undefined, schema: TSchema): TSchema {
  const field = op.voiceField;
  if (!field || adapter.takesVoices?.(spec)) return schema;
  const base = schema as unknown as { properties?: Record<string, unknown> };
  if (!base.properties || !Object.hasOwn(base.properties, field)) return schema;
  const { [field]: _left, ...properties } = base.properties;
  return { ...base, properties } as unknown as TSchema;
}

/** True when the route's input schema takes the operation's voice field. */
export function routeTakesVoices(op: OperationContract, inputSchema: TSchema): boolean {
  const field = op.voiceField;
  const properties = (inputSchema as unknown as { properties?: Record<string, unknown> }).properties;
  return field !== undefined && properties !== undefined && Object.hasOwn(properties, field);
}

/**
 * The reference audio of the voice a job speaks with, checked against the sha256 stored with the
 * voice: an adapter sends these bytes, or nothing (PROVIDER_ERROR, before any provider call).
 */
export async function readVoiceReference(job: ProviderRun): Promise<{ bytes: Buffer; mimeType: string; sha256: string }> {
  const voice = job.voice;
  if (!voice) throw new ProviderError('PROVIDER_ERROR', 'The job names no voice.');
  const file = await job.media.read(voice.referenceMediaId);
  if (file.sha256 !== voice.referenceSha256) {
    throw new ProviderError('PROVIDER_ERROR', `The reference audio of voice ${voice.id} does not match the sha256 stored with the voice.`);
  }
  return file;
}
