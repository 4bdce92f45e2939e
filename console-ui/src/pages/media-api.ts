/** The console's media endpoints (src/console/routes-media.ts) and what they answer. */
import { request, type KeyMode } from '../api.js';

export interface MediaItem {
  id: string;
  workspaceId: string;
  name: string;
  mimeType: string;
  sizeBytes: number;
  sha256: string;
  createdAt: string;
  /** Signed URL for the preview and download; works until downloadUrlExpiresAt. */
  downloadUrl: string;
  downloadUrlExpiresAt: string;
}

export interface MediaPage {
  items: MediaItem[];
  nextCursor: string | null;
  maxUploadBytes: number;
  acceptedTypes: { mimeType: string; extension: string }[];
}

/** A media endpoint of `mode` (the shell's test-mode switch: `?mode=test` for the test media). */
const media = (workspaceId: string, mode: KeyMode, rest = '', query: Record<string, string> = {}) => {
  const params = new URLSearchParams(query);
  if (mode === 'test') params.set('mode', 'test');
  const qs = params.toString();
  return `/workspaces/${encodeURIComponent(workspaceId)}/media${rest}${qs ? `?${qs}` : ''}`;
};

export const mediaApi = {
  list: (workspaceId: string, mode: KeyMode, cursor?: string) => request<MediaPage>('GET', media(workspaceId, mode, '', cursor ? { cursor } : {})),
  /** The same checks as POST /v1/media/upload: one part named `file`. */
  upload: (workspaceId: string, file: File, mode: KeyMode) => {
    const form = new FormData();
    form.append('file', file, file.name);
    return request<{ media: Omit<MediaItem, 'downloadUrl' | 'downloadUrlExpiresAt'> }>('POST', media(workspaceId, mode, '/upload'), form);
  },
  download: (workspaceId: string, mediaId: string, mode: KeyMode) => request<{ mediaId: string; url: string; expiresAt: string }>('GET', media(workspaceId, mode, `/${encodeURIComponent(mediaId)}/download`)),
};
