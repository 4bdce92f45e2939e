/**
 * The real work of the `link.preview` Tool operation: fetch one web page and read its metadata.
 *
 * Invariant: the page is fetched only through the guarded `Egress` it is given (GET, at most 5
 * redirects, bounded time and bytes), and the outcome is either `{ metadata }` obeying the
 * `extractMetadata` invariant (./link-preview-extract.ts) or a `LinkPreviewError` with one of the
 * `LinkPreviewErrorCode`s — never a raw egress error. The one exception is a caller abort through
 * `options.signal`, whose reason is rethrown unchanged, as the egress does.
 */
import { EgressError, type Egress, type EgressErrorCode } from '../egress/types.js';
import { extractMetadata, type LinkMetadata } from './link-preview-extract.js';

export { extractMetadata, LINK_PREVIEW_LIMITS, type LinkMetadata } from './link-preview-extract.js';

export type LinkPreviewErrorCode =
  | 'LINK_BLOCKED'
  | 'LINK_UNREACHABLE'
  | 'LINK_TIMEOUT'
  | 'LINK_TOO_LARGE'
  | 'LINK_TOO_MANY_REDIRECTS'
  | 'LINK_HTTP_ERROR';

export class LinkPreviewError extends Error {
  constructor(
    readonly code: LinkPreviewErrorCode | (string & {}),
    message: string,
    options?: { cause?: unknown },
    /** Whether a page answered (the fetch reached a server) before the failure. */
    readonly fetched = true,
  ) {
    super(message, options);
    this.name = 'LinkPreviewError';
  }
}

export interface LinkPreviewOptions {
  signal?: AbortSignal;
  /** Whole-request deadline, redirects included. Default 10 s. */
  timeoutMs?: number;
  /** Largest body accepted (after decompression). Default 2 MiB. */
  maxBytes?: number;
}

export const LINK_PREVIEW_DEFAULTS = {
  timeoutMs: 10_000,
  maxBytes: 2 * 1024 * 1024,
  maxRedirects: 5,
  accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1',
} as const;

const EGRESS_TO_LINK: Record<EgressErrorCode, LinkPreviewErrorCode> = {
  EGRESS_BAD_URL: 'LINK_BLOCKED',
  EGRESS_BLOCKED: 'LINK_BLOCKED',
  EGRESS_DNS: 'LINK_UNREACHABLE',
  EGRESS_NETWORK: 'LINK_UNREACHABLE',
  EGRESS_TIMEOUT: 'LINK_TIMEOUT',
  EGRESS_TOO_LARGE: 'LINK_TOO_LARGE',
  EGRESS_TOO_MANY_REDIRECTS: 'LINK_TOO_MANY_REDIRECTS',
};

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Fetches `url` through `egress` and extracts its metadata (see the file invariant). */
export async function fetchLinkPreview(
  egress: Egress,
  url: string,
  options: LinkPreviewOptions = {},
): Promise<{ metadata: LinkMetadata }> {
  let response;
  try {
    response = await egress.request(url, {
      method: 'GET',
      headers: { accept: LINK_PREVIEW_DEFAULTS.accept },
      timeoutMs: options.timeoutMs ?? LINK_PREVIEW_DEFAULTS.timeoutMs,
      maxBytes: options.maxBytes ?? LINK_PREVIEW_DEFAULTS.maxBytes,
      maxRedirects: LINK_PREVIEW_DEFAULTS.maxRedirects,
      signal: options.signal,
    });
  } catch (err) {
    if (err instanceof EgressError) {
      throw new LinkPreviewError(EGRESS_TO_LINK[err.code] ?? 'LINK_UNREACHABLE', err.message, { cause: err }, err.responded);
    }
    throw err;
  }
  if (response.status < 200 || response.status > 299) {
    throw new LinkPreviewError('LINK_HTTP_ERROR', `the page answered HTTP ${response.status}`);
  }
  const contentType = firstHeader(response.headers['content-type']);
  return { metadata: extractMetadata(response.body, response.url, contentType) };
}
