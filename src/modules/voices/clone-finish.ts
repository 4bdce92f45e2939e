/**
 * What a completed voice.clone job writes besides its result (issue 37): the workspace voice, in
 * the transaction that finishes the job, so a voice exists exactly when its job completed (a
 * finish that rolls back leaves none, and `voices.job_id` is unique). The result's `voice.id`
 * becomes the workspace voice's id; the adapter's id (a Replicate prediction) is kept as the
 * provider's own id of the clone. The reference audio is the first sample of the input, with the
 * sha256 its media item has. The name is the input's without control characters (PostgreSQL's text
 * refuses NUL; found by test/runs/runs-inputs-fuzz.test.ts).
 */
import type { Transaction } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Database } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import type { OperationRoute } from '../../providers/types.js';
import { ProviderError } from '../../providers/types.js';
import { findMediaItems } from '../media/service.js';
import * as store from './store.js';

export interface ClonedVoice {
  /** The result with `voice.id` the workspace voice's id. */
  output: Record<string, unknown>;
  /** Inserts the voice; run by the transaction that completes the job. */
  write(trx: Transaction<Database>): Promise<void>;
}

/** Text without control characters: PostgreSQL's text refuses NUL, and a name is shown, never a control sequence. */
function withoutControls(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '');
}

/** The voice's name as stored and shown: the input's, without control characters and outer spaces ("Voice" when nothing is left). */
function voiceName(value: unknown): string {
  return withoutControls(String(value ?? '')).trim() || 'Voice';
}

/** For a voice.clone job about to complete: the voice it makes; undefined for any other operation. */
export async function prepareClonedVoice(
  deps: Deps,
  job: { id: string; workspace_id: string; operation_id: string },
  input: Record<string, unknown>,
  route: OperationRoute,
  output: Record<string, unknown>,
): Promise<ClonedVoice | undefined> {
  if (job.operation_id !== 'voice.clone') return undefined;
  const referenceId = Array.isArray(input.referenceMediaIds) ? String(input.referenceMediaIds[0]).toLowerCase() : undefined;
  const [reference] = referenceId ? await findMediaItems(deps, job.workspace_id, [referenceId]) : [];
  if (!reference) throw new ProviderError('MEDIA_UNREADABLE', 'The reference audio of the voice is not a media item of the workspace.');
  const made = (output.voice ?? {}) as { id?: unknown; name?: unknown };
  const name = voiceName(input.name ?? made.name);
  const id = newId();
  return {
    output: { ...output, voice: { id, name } },
    write: (trx) =>
      store.insertVoice(trx, {
        id,
        workspaceId: job.workspace_id,
        name,
        referenceMediaId: reference.id,
        referenceSha256: reference.sha256,
        provider: route.providerName,
        model: route.model,
        providerVoiceId: typeof made.id === 'string' && made.id !== '' ? withoutControls(made.id) : null,
        jobId: job.id,
        createdAt: deps.clock.now(),
        deletedAt: null,
      }),
  };
}
