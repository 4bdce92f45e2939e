/**
 * Workspace voices (issue 37; docs/decisions.md "Voices"): listed, read and deleted over the API,
 * checked when a run names one, and read by the attempt that speaks with it. A voice belongs to
 * the scope its voice.clone job ran in (a workspace and a mode: lib/livemode.ts), so another
 * workspace's or mode's voice is never listed, read or used.
 */
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { keysetPage, type PageRequest } from '../../http/pagination.js';
import type { OperationContract } from '../../operations/contract.js';
import type { OperationRoute, VoiceReference } from '../../providers/types.js';
import { ProviderError } from '../../providers/types.js';
import { routeTakesVoices } from '../../providers/voices.js';
import * as store from './store.js';
import type { VoiceRecord } from './store.js';

const NOT_FOUND_MESSAGE = 'No voice with this id exists in the selected workspace.';

export async function listVoices(deps: Deps, workspaceId: string, page: PageRequest): Promise<{ items: VoiceRecord[]; nextCursor: string | null }> {
  return keysetPage(deps, 'voices', workspaceId, page, (before, limit) => store.pageVoices(deps.db, workspaceId, before, limit));
}

/** A voice of the workspace; 404 for a deleted one, another workspace's or mode's, or none. */
export async function getVoice(deps: Deps, workspaceId: string, id: string): Promise<VoiceRecord> {
  const voice = await store.findVoice(deps.db, workspaceId, id.toLowerCase());
  if (!voice || voice.deletedAt !== null) throw new AppError('NOT_FOUND', { message: NOT_FOUND_MESSAGE });
  return voice;
}

/**
 * Deletes a voice: new runs naming it are refused, queued jobs that name it fail VOICE_DELETED
 * before they reach a provider; its reference audio stays a media item of the workspace. 404 when
 * there is no such voice here (deleted already included).
 */
export async function deleteVoice(deps: Deps, workspaceId: string, id: string): Promise<{ id: string; deleted: true }> {
  const voiceId = id.toLowerCase();
  const deleted = await store.markVoiceDeleted(deps.db, workspaceId, voiceId, deps.clock.now());
  if (!deleted) throw new AppError('NOT_FOUND', { message: NOT_FOUND_MESSAGE });
  return { id: voiceId, deleted: true };
}

/**
 * A run's voice field on a route that cannot speak with voices: 400 INVALID_INPUT naming the field,
 * before the input's schema is checked (whose answer would only say the property is not allowed)
 * and before anything is held.
 */
export function refuseVoiceOnRoute(op: OperationContract, route: OperationRoute, input: Record<string, unknown>): void {
  const field = op.voiceField;
  if (!field || !Object.hasOwn(input, field) || routeTakesVoices(op, route.inputSchema)) return;
  const provider = route.model ? `${route.providerName}, model ${route.model}` : route.providerName;
  throw new AppError('INVALID_INPUT', {
    message: `The provider of ${op.id} on this deployment (${provider}) cannot speak with a workspace voice.`,
    details: {
      errors: [{ pointer: `/input/${field}`, message: `not accepted here: the provider takes no reference voice; leave ${field} out, or ask the operator for a speech model that takes speaker audio (docs/providers.md)` }],
    },
  });
}

/**
 * The voice a run names must be a voice of this workspace and mode that was not deleted: another
 * workspace's or mode's voice is 404 NOT_FOUND (as its GET would be), an unknown or deleted id
 * 400 INVALID_INPUT naming the field. Checked at admission, before anything is held.
 */
export async function checkVoiceInput(deps: Deps, workspaceId: string, op: OperationContract, input: Record<string, unknown>): Promise<void> {
  const field = op.voiceField;
  const value = field === undefined ? undefined : input[field];
  if (typeof value !== 'string') return;
  const id = value.toLowerCase();
  const pointer = `/input/${field}`;
  const voice = await store.findVoice(deps.db, workspaceId, id);
  if (voice && voice.deletedAt === null) {
    input[field!] = id;
    return;
  }
  if (!voice) {
    const owner = await store.findVoiceWorkspace(deps.db, id);
    if (owner !== undefined) throw new AppError('NOT_FOUND', { message: NOT_FOUND_MESSAGE, details: { pointer } });
  }
  throw new AppError('INVALID_INPUT', {
    message: 'The input names a voice that cannot be used.',
    details: { errors: [{ pointer, message: voice ? 'This voice was deleted.' : 'No voice with this id exists in the selected workspace (GET /v1/voices lists them).' }] },
  });
}

/**
 * The voice an attempt speaks with (ProviderRun.voice), or undefined when the input names none.
 * A voice deleted since the job was admitted fails the attempt VOICE_DELETED before any provider
 * call, charged nothing.
 */
export async function voiceForAttempt(deps: Deps, workspaceId: string, op: OperationContract, input: Record<string, unknown>): Promise<VoiceReference | undefined> {
  const value = op.voiceField === undefined ? undefined : input[op.voiceField];
  if (typeof value !== 'string') return undefined;
  const voice = await store.findVoice(deps.db, workspaceId, value.toLowerCase());
  if (!voice || voice.deletedAt !== null) throw new ProviderError('VOICE_DELETED', 'The voice this job speaks with was deleted after the job was admitted.');
  return {
    id: voice.id,
    name: voice.name,
    referenceMediaId: voice.referenceMediaId,
    referenceSha256: voice.referenceSha256,
    provider: voice.provider,
    model: voice.model,
    providerVoiceId: voice.providerVoiceId,
  };
}
