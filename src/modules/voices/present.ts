/** The public Voice shape (GET /v1/voices, MCP, SDK): built field by field, the provider's own id of the clone stays private. */
import { Type } from 'typebox';
import { toIso } from '../../lib/clock.js';
import { isLiveScope, publicWorkspaceId } from '../../lib/livemode.js';
import { Livemode, Timestamp, Uuid } from '../../http/schemas.js';
import type { VoiceRecord } from './store.js';

export const VoiceSchema = Type.Object({
  id: Uuid,
  workspaceId: Uuid,
  livemode: Livemode,
  name: Type.String(),
  referenceMediaId: Type.String({ format: 'uuid', description: 'The reference audio: the first sample voice.clone was given, a media item of the workspace.' }),
  referenceSha256: Type.String({ description: 'Hex SHA-256 of the reference audio; a provider that speaks with the voice is sent exactly these bytes.' }),
  provider: Type.String({ description: 'The provider (its name in the providers file, or simulated) that cloned the voice.' }),
  model: Type.Union([Type.String(), Type.Null()]),
  jobId: Type.String({ format: 'uuid', description: 'The voice.clone job that made it.' }),
  createdAt: Timestamp,
});

export function presentVoice(v: VoiceRecord) {
  return {
    id: v.id,
    workspaceId: publicWorkspaceId(v.workspaceId),
    livemode: isLiveScope(v.workspaceId),
    name: v.name,
    referenceMediaId: v.referenceMediaId,
    referenceSha256: v.referenceSha256,
    provider: v.provider,
    model: v.model,
    jobId: v.jobId,
    createdAt: toIso(v.createdAt),
  };
}
