/** The console's media endpoints (src/console/routes-media.ts) and what they answer. */
import { request } from '../api.js';

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

const media = (workspaceId: string) => `/workspaces/${encodeURIComponent(workspaceId)}/media`;

export const mediaApi = {
  list: (workspaceId: string, cursor?: string) => request<MediaPage>('GET', `${media(workspaceId)}${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`),
  /** The same checks as POST /v1/media/upload: one part named `file`. */
  upload: (workspaceId: string, file: File) => {
    const form = new FormData();
    form.append('file', file, file.name);
    return request<{ media: Omit<MediaItem, 'downloadUrl' | 'downloadUrlExpiresAt'> }>('POST', `${media(workspaceId)}/upload`, form);
  },
  download: (workspaceId: string, mediaId: string) => request<{ mediaId: string; url: string; expiresAt: string }>('GET', `${media(workspaceId)}/${encodeURIComponent(mediaId)}/download`),
};
