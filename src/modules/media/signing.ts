/**
 * Signed download URLs of the local store: `<PUBLIC_BASE_URL>/media-files/<workspaceId>/<mediaId>
 * ?expires=<epoch ms>&token=<HMAC>`. The HMAC (SHA-256 under the SECRET_KEY-derived `url` key)
 * covers workspace, media id and expiry, so changing any part of the URL, or using it after
 * `expires`, is refused. The parameter is named `token` so request logs redact it.
 */
import { urlSegmentOfScope } from '../../lib/livemode.js';
import { hmacSha256, safeEqual, type Keyring } from '../../lib/crypto.js';

export const DOWNLOAD_PREFIX = '/media-files';

function mac(keyring: Keyring, workspaceId: string, mediaId: string, expiresAt: number): string {
  return hmacSha256(keyring.key('url'), `media-download\n${workspaceId}\n${mediaId}\n${expiresAt}`).toString('base64url');
}

export function localDownloadUrl(baseUrl: string, keyring: Keyring, workspaceId: string, mediaId: string, expiresAt: number): string {
  // The path names a test twin as `test-{live id}` (responses never show a twin's id); the token signs the scope itself.
  return `${baseUrl}${DOWNLOAD_PREFIX}/${urlSegmentOfScope(workspaceId)}/${mediaId}?expires=${expiresAt}&token=${mac(keyring, workspaceId, mediaId, expiresAt)}`;
}

/** True when `token` is the signature of exactly these values (compared in constant time). */
export function verifyDownloadToken(keyring: Keyring, workspaceId: string, mediaId: string, expires: string, token: string): boolean {
  if (!/^[1-9][0-9]{0,15}$/.test(expires)) return false;
  return safeEqual(token, mac(keyring, workspaceId, mediaId, Number(expires)));
}
