/**
 * SHA-256 the SDK verifies outputs and uploads with. The core uses WebCrypto (browsers, Node 20+,
 * Deno, workers), which hashes a whole buffer at once, so the default hasher keeps the bytes it
 * was given until `hex()`. The Node entry (`workspace-automation-sdk/node`) passes an
 * incremental hasher built on node:crypto instead.
 */

export interface Sha256 {
  /** Adds `data` (a string is hashed as UTF-8) and returns the number of bytes added. */
  update(data: string | Uint8Array): number;
  /** Hex digest of everything added. */
  hex(): Promise<string>;
}

export type Sha256Factory = () => Sha256;

const encoder = new TextEncoder();

export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += (b < 16 ? '0' : '') + b.toString(16);
  return out;
}

/** The default: buffers the bytes and hashes them with crypto.subtle at the end. */
export const webCryptoSha256: Sha256Factory = () => {
  const chunks: Uint8Array[] = [];
  let size = 0;
  return {
    update(data) {
      const bytes = typeof data === 'string' ? encoder.encode(data) : data;
      chunks.push(bytes);
      size += bytes.byteLength;
      return bytes.byteLength;
    },
    async hex() {
      const all = new Uint8Array(size);
      let at = 0;
      for (const c of chunks) {
        all.set(c, at);
        at += c.byteLength;
      }
      return toHex(new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', all)));
    },
  };
};

/** Hex SHA-256 of bytes or a string (UTF-8), with WebCrypto. */
export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === 'string' ? encoder.encode(data) : data;
  return toHex(new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes)));
}
