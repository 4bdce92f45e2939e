/**
 * Workspace voices (issue 37): GET /v1/voices, GET /v1/voices/{voiceId}, DELETE /v1/voices/{voiceId}.
 * Voices are made by voice.clone runs; the rules are in service.ts and docs/decisions.md "Voices".
 * Scopes as media, whose kind of workspace asset they are: reading needs media:read, deleting
 * media:write.
 */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.js';
import { requireAuth } from '../../http/auth-hook.js';
import { ErrorBodySchema, envelopeSchema, ok } from '../../http/envelope.js';
import { PageQuerySchema, type PageQuery } from '../../http/pagination.js';
import { IdParams, Uuid, WorkspaceHeaders } from '../../http/schemas.js';
import { presentVoice, VoiceSchema } from './present.js';
import { deleteVoice, getVoice, listVoices } from './service.js';

const VoiceParams = IdParams('voiceId');
type VoiceParamsT = { voiceId: string };

const NotFound = { ...ErrorBodySchema, description: "NOT_FOUND: no such voice in the selected workspace and mode (also for another workspace's or mode's id, and a deleted one)." };

const DeletedSchema = Type.Object({ id: Uuid, deleted: Type.Literal(true) });

export async function voiceRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  app.get<{ Querystring: PageQuery }>(
    '/v1/voices',
    {
      schema: {
        tags: ['voices'],
        summary: 'List the workspace voices, newest first',
        description: 'Voices made by voice.clone runs in this workspace and mode (deleted ones are left out). speech.generate speaks with one as `voiceId` where its provider takes reference voices.',
        headers: WorkspaceHeaders,
        querystring: PageQuerySchema,
        response: { 200: envelopeSchema(Type.Object({ items: Type.Array(VoiceSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) })) },
      },
      config: { meta: { code: 'PUBLIC_VOICES_LIST', message: 'Voices listed.', auth: 'key', scope: 'media:read', points: 2 } },
    },
    async (request) => {
      const auth = requireAuth(request);
      const page = await listVoices(deps, auth.workspace.id, { limit: request.query.limit ?? 25, cursor: request.query.cursor });
      return ok(request, { items: page.items.map(presentVoice), nextCursor: page.nextCursor });
    },
  );

  app.get<{ Params: VoiceParamsT }>(
    '/v1/voices/:voiceId',
    {
      schema: { tags: ['voices'], summary: 'Read one voice', headers: WorkspaceHeaders, params: VoiceParams, response: { 200: envelopeSchema(VoiceSchema), 404: NotFound } },
      config: { meta: { code: 'PUBLIC_VOICES_GET', message: 'Voice read.', auth: 'key', scope: 'media:read', points: 1 } },
    },
    async (request) => ok(request, presentVoice(await getVoice(deps, requireAuth(request).workspace.id, request.params.voiceId))),
  );

  app.delete<{ Params: VoiceParamsT }>(
    '/v1/voices/:voiceId',
    {
      schema: {
        tags: ['voices'],
        summary: 'Delete a voice',
        description:
          'For good: runs naming it are refused (400 INVALID_INPUT on voiceId) and queued jobs that name it fail VOICE_DELETED before they reach a provider, charged nothing. ' +
          'Its reference audio stays a media item of the workspace.',
        headers: WorkspaceHeaders,
        params: VoiceParams,
        response: { 200: envelopeSchema(DeletedSchema), 404: NotFound },
      },
      config: { meta: { code: 'PUBLIC_VOICES_DELETE', message: 'Voice deleted.', auth: 'key', scope: 'media:write', points: 2 } },
    },
    async (request) => ok(request, await deleteVoice(deps, requireAuth(request).workspace.id, request.params.voiceId)),
  );
}
