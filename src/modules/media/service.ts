/**
 * The media library's rules (issue 4, spec Rule 7): uploads pass every content check before
 * anything is stored; a blob is written durably first and its row and `media.created` event follow
 * in one transaction (which also re-checks the storage quota under a workspace lock), and the
 * blob is removed again if that transaction fails, so a refused or failed upload leaves nothing.
 * Reads are scoped to the selected workspace: another workspace's id is 404. Downloads are
 * signed URLs that need no API key and expire after MEDIA_URL_TTL_S.
 */
import { isLiveScope, publicWorkspaceId } from '../../lib/livemode.js';
import { rm } from 'node:fs/promises';
import type { Transaction } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Database } from '../../db/schema.js';
import { lockWorkspace } from '../../db/locking.js';
import { AppError } from '../../http/errors.js';
import { keysetPage, type PageRequest } from '../../http/pagination.js';
import { toIso } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { newId, isUuid } from '../../lib/ids.js';
import type { MediaField, MediaKind } from '../../operations/contract.js';
import type { Workspace } from '../accounts/types.js';
import { insertEvent } from '../events/store.js';
import { inTransaction } from '../../db/group-commit.js';
import { storageKeyFor } from './blob-store.js';
import { bareMimeType, formatForDeclared, kindForMimeType, sanitizeFileName } from './formats.js';
import { inspectUpload } from './inspect.js';
import { mediaLimitsFor } from './limits.js';
import * as store from './store.js';
import type { MediaItem, MediaRecord } from './store.js';
import type { StagedUpload } from './upload-receiver.js';

export type { MediaKind } from '../../operations/contract.js';
export type { MediaItem, MediaRecord } from './store.js';

/** The public Media item (spec "Media item" plus `sha256`); `downloadUrl` is null outside downloads. */
export function presentMedia(item: MediaItem) {
  return {
    id: item.id,
    workspaceId: publicWorkspaceId(item.workspaceId),
    livemode: isLiveScope(item.workspaceId),
    name: item.name,
    mimeType: item.mimeType,
    sizeBytes: item.sizeBytes,
    sha256: item.sha256,
    createdAt: toIso(item.createdAt),
    downloadUrl: null,
  };
}

function quotaExceeded(quotaBytes: number, usedBytes: number, sizeBytes: number): AppError {
  return new AppError('STORAGE_QUOTA_EXCEEDED', {
    message: `Storing ${sizeBytes} bytes would exceed the workspace's media storage quota (${usedBytes} of ${quotaBytes} bytes used).`,
    details: { quotaBytes, usedBytes, sizeBytes },
  });
}

/**
 * Writes the blob, then row + event in one transaction; removes the blob if the transaction
 * fails. `quotaBytes` (uploads only) is checked again inside the transaction under the lock.
 */
async function commitMedia(deps: Deps, record: MediaRecord, writeBlob: () => Promise<void>, eventData: Record<string, unknown>, quotaBytes?: number): Promise<void> {
  await writeOrRemove(deps, record.storageKey, writeBlob);
  try {
    await inTransaction(deps, async (trx) => {
      if (quotaBytes !== undefined) {
        await lockWorkspace(trx, deps.caps, record.workspaceId);
        const used = await store.sumMediaBytes(trx, record.workspaceId);
        if (used + record.sizeBytes > quotaBytes) throw quotaExceeded(quotaBytes, used, record.sizeBytes);
      }
      await store.insertMedia(trx, record);
      // The event is stamped inside its transaction, not when the upload began (docs/decisions.md,
      // "Event createdAt": along the feed it runs backwards by at most one writing transaction).
      await insertEvent(trx, record.workspaceId, 'media.created', eventData, deps.clock.now());
    });
  } catch (err) {
    await deps.blobs.delete(record.storageKey).catch((e: unknown) => deps.log.error({ err: e, storageKey: record.storageKey }, 'could not remove the blob of a failed media insert'));
    throw err;
  }
}

/**
 * Runs a blob write; if it fails (a full disk: ENOSPC in the middle of it), whatever it may have
 * put in place under the key is removed before the failure is passed on, so no blob without its
 * row remains. (Temporary files of the write are removed by the store itself.)
 */
async function writeOrRemove(deps: Deps, storageKey: string, write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (err) {
    await deps.blobs.delete(storageKey).catch((e: unknown) => deps.log.error({ err: e, storageKey }, 'could not remove the blob of a failed write'));
    throw err;
  }
}

/** Checks a staged upload and stores it as a media item of the workspace; the staged file is always removed. */
export async function storeUploadedMedia(deps: Deps, workspace: Workspace, staged: StagedUpload): Promise<MediaRecord> {
  try {
    const { format } = await inspectUpload(staged.path, staged.declaredMimeType);
    const { storageQuotaBytes } = mediaLimitsFor(workspace.plan);
    const used = await store.sumMediaBytes(deps.db, workspace.id);
    if (used + staged.sizeBytes > storageQuotaBytes) throw quotaExceeded(storageQuotaBytes, used, staged.sizeBytes);
    const id = newId();
    const record: MediaRecord = {
      id,
      workspaceId: workspace.id,
      name: sanitizeFileName(staged.fileName, format.extension),
      mimeType: format.mimeType,
      sizeBytes: staged.sizeBytes,
      sha256: staged.sha256,
      kind: format.kind,
      createdAt: deps.clock.now(),
      storageKey: storageKeyFor(workspace.id, id),
      jobId: null,
    };
    const meta = { mimeType: record.mimeType, sizeBytes: record.sizeBytes };
    await commitMedia(deps, record, () => deps.blobs.putFile(record.storageKey, staged.path, meta), { media: presentMedia(record) }, storageQuotaBytes);
    return record;
  } finally {
    await rm(staged.path, { force: true });
  }
}

/**
 * Stores bytes produced by a job as a media item of the workspace: blob first (durable), then
 * row and `media.created` event (data `{media, jobId}`) in one transaction. Job results count
 * toward the storage quota but are not refused by it (the work is paid for).
 */
export async function storeGeneratedMedia(deps: Deps, input: GeneratedMedia): Promise<MediaRecord> {
  const record = await writeGeneratedMedia(deps, input);
  await commitMedia(deps, record, async () => {}, { media: presentMedia(record), jobId: input.jobId });
  return record;
}

export interface GeneratedMedia {
  workspaceId: string;
  jobId: string;
  name: string;
  mimeType: string;
  bytes: Buffer;
}

/**
 * The first half of storeGeneratedMedia: writes the blob durably and returns the record, for a
 * caller that inserts it with recordGeneratedMedia in a transaction of its own (a finishing job
 * records its last files with its result). If that transaction fails, the caller removes the blob.
 */
export async function writeGeneratedMedia(deps: Deps, input: GeneratedMedia): Promise<MediaRecord> {
  const id = newId();
  const mimeType = bareMimeType(input.mimeType) || 'application/octet-stream';
  const record: MediaRecord = {
    id,
    workspaceId: input.workspaceId,
    name: sanitizeFileName(input.name, formatForDeclared(mimeType)?.extension ?? 'bin'),
    mimeType,
    sizeBytes: input.bytes.length,
    sha256: sha256Hex(input.bytes),
    kind: kindForMimeType(mimeType),
    createdAt: deps.clock.now(),
    storageKey: storageKeyFor(input.workspaceId, id),
    jobId: input.jobId,
  };
  await writeOrRemove(deps, record.storageKey, () => deps.blobs.putBytes(record.storageKey, input.bytes, { mimeType, sizeBytes: record.sizeBytes, sha256: record.sha256 }));
  return record;
}

/**
 * The second half: the row and its `media.created` event (data `{media, jobId}`), in `trx`; the
 * event is stamped `now`, a time taken inside that transaction (the file may be much older).
 */
export async function recordGeneratedMedia(trx: Transaction<Database>, record: MediaRecord, now: number): Promise<void> {
  await store.insertMedia(trx, record);
  await insertEvent(trx, record.workspaceId, 'media.created', { media: presentMedia(record), jobId: record.jobId }, now);
}

/**
 * A signed download URL that works without the API key until expiresAt = signingTimeMs +
 * MEDIA_URL_TTL_S; the same (media, signingTimeMs) always gives the same URL. Async because S3
 * presigning is.
 */
export async function signedMediaUrl(
  deps: Deps,
  item: Pick<MediaItem, 'id' | 'workspaceId'> & { storageKey?: string },
  signingTimeMs: number,
): Promise<{ url: string; expiresAt: number }> {
  const ttl = deps.config.mediaUrlTtlS;
  const key = item.storageKey ?? storageKeyFor(item.workspaceId, item.id);
  const url = await deps.blobs.signedUrl({ workspaceId: item.workspaceId, id: item.id, key }, signingTimeMs, ttl);
  return { url, expiresAt: signingTimeMs + ttl * 1000 };
}

/** Media items of the workspace among `ids`, in the order asked (unknown and foreign ids are skipped). */
export async function findMediaItems(deps: Deps, workspaceId: string, ids: string[]): Promise<MediaRecord[]> {
  const wanted = [...new Set(ids.filter((id) => isUuid(id)).map((id) => id.toLowerCase()))];
  const found = new Map((await store.findMediaByIds(deps.db, workspaceId, wanted)).map((m) => [m.id, m]));
  return wanted.flatMap((id) => found.get(id) ?? []);
}

/**
 * Checks the media references of an operation input: every id names a media item of the
 * workspace with an accepted kind. Otherwise 400 INVALID_INPUT listing each bad reference by JSON
 * pointer into the request body, as schema errors are (`/input/referenceMediaIds/1`, `/input/mediaId`,
 * `/input/edits/2/mediaId` for a field read `within` the elements of a list).
 */
export async function checkMediaInputs(deps: Deps, workspaceId: string, fields: MediaField[], input: Record<string, unknown>): Promise<void> {
  const refs: { pointer: string; id: unknown; kinds: MediaKind[] }[] = [];
  for (const field of fields) {
    const value = input[field.field];
    if (value === undefined) continue;
    if (field.within !== undefined) {
      // The ids sit in a property of each element (edits[].mediaId); the schema already made the
      // field an array of objects, and elements without the property reference no media.
      const within = field.within;
      if (!Array.isArray(value)) continue;
      value.forEach((element, i) => {
        if (typeof element !== 'object' || element === null || !Object.hasOwn(element, within)) return;
        refs.push({ pointer: `/input/${field.field}/${i}/${within}`, id: (element as Record<string, unknown>)[within], kinds: field.kinds });
      });
      continue;
    }
    if (field.multiple) {
      if (!Array.isArray(value)) {
        refs.push({ pointer: `/input/${field.field}`, id: value, kinds: field.kinds });
        continue;
      }
      value.forEach((id, i) => refs.push({ pointer: `/input/${field.field}/${i}`, id, kinds: field.kinds }));
    } else {
      refs.push({ pointer: `/input/${field.field}`, id: value, kinds: field.kinds });
    }
  }
  if (refs.length === 0) return;
  const items = await findMediaItems(deps, workspaceId, refs.flatMap((r) => (typeof r.id === 'string' ? [r.id] : [])));
  const byId = new Map(items.map((m) => [m.id, m]));
  const errors: { pointer: string; message: string }[] = [];
  for (const ref of refs) {
    const item = typeof ref.id === 'string' ? byId.get(ref.id.toLowerCase()) : undefined;
    if (!item) errors.push({ pointer: ref.pointer, message: 'No media item with this id exists in the selected workspace.' });
    else if (!(ref.kinds as string[]).includes(item.kind)) {
      errors.push({ pointer: ref.pointer, message: `Expected ${ref.kinds.join(' or ')} media; this item is ${item.kind} media (${item.mimeType}).` });
    }
  }
  if (errors.length > 0) throw new AppError('INVALID_INPUT', { message: 'The input references media that cannot be used.', details: { errors } });
}

export async function getMediaItem(deps: Deps, workspaceId: string, id: string): Promise<MediaRecord> {
  const item = await store.findMedia(deps.db, workspaceId, id.toLowerCase());
  if (!item) throw new AppError('NOT_FOUND', { message: 'No media item with this id exists in the selected workspace.' });
  return item;
}

export async function listMedia(deps: Deps, workspaceId: string, page: PageRequest): Promise<{ items: MediaRecord[]; nextCursor: string | null }> {
  return keysetPage(deps, 'media', workspaceId, page, (before, limit) => store.pageMedia(deps.db, workspaceId, before, limit));
}

/** GET /v1/media/{id}/download: a fresh signed URL signed now. */
export async function mediaDownload(deps: Deps, workspaceId: string, id: string): Promise<{ mediaId: string; url: string; expiresAt: number }> {
  const item = await getMediaItem(deps, workspaceId, id);
  const { url, expiresAt } = await signedMediaUrl(deps, item, deps.clock.now());
  return { mediaId: item.id, url, expiresAt };
}
