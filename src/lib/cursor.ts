/**
 * Opaque, tamper-proof list cursors: `<payload>.<mac>` in base64url. The MAC also covers the list
 * name and the workspace, so a cursor from another list or another workspace fails verification
 * (400 INVALID_CURSOR) without being carried in the cursor itself.
 */
import { hmacSha256, safeEqual, type Keyring } from './crypto.js';

const MAC_BYTES = 16;

export class CursorCodec {
  constructor(private readonly keyring: Keyring) {}

  private mac(list: string, scope: string, payload: string): string {
    return hmacSha256(this.keyring.key('cursor'), `${list}\n${scope}\n${payload}`).subarray(0, MAC_BYTES).toString('base64url');
  }

  encode(list: string, scope: string, value: unknown): string {
    const payload = Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
    return `${payload}.${this.mac(list, scope, payload)}`;
  }

  /** Returns the decoded value, or undefined when the cursor is malformed, forged or foreign. */
  decode<T>(list: string, scope: string, cursor: string): T | undefined {
    const dot = cursor.indexOf('.');
    if (dot <= 0 || dot !== cursor.lastIndexOf('.')) return undefined;
    const payload = cursor.slice(0, dot);
    const mac = cursor.slice(dot + 1);
    if (!safeEqual(mac, this.mac(list, scope, payload))) return undefined;
    try {
      return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as T;
    } catch {
      return undefined;
    }
  }
}
