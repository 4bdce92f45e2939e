/**
 * Small crypto helpers. Every secret the service derives comes from SECRET_KEY through HKDF with a
 * purpose label, so one leaked derived key never reveals another.
 */
import * as crypto from 'node:crypto';
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/** One-shot `crypto.hash` (Node >= 20.12) is about three times cheaper than a Hash object. */
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string | Buffer, encoding: 'hex') => string }).hash;

export function sha256Hex(data: string | Buffer): string {
  if (oneShotHash) return oneShotHash('sha256', data, 'hex');
  return createHash('sha256').update(data).digest('hex');
}

export function hmacSha256(key: Buffer | string, data: string | Buffer): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

/** Constant-time equality of two strings (false for different lengths, without early exit on content). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  if (ab.length !== bb.length) {
    // Compare against itself so the time spent does not depend on where the strings differ.
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export type KeyPurpose = 'cursor' | 'url' | 'encrypt' | 'output-cursor';

/** Keys derived from the deployment's SECRET_KEY, one per purpose. */
export class Keyring {
  private readonly cache = new Map<KeyPurpose, Buffer>();
  constructor(private readonly secret: string) {
    if (secret.length < 32) throw new Error('SECRET_KEY must be at least 32 characters');
  }

  key(purpose: KeyPurpose): Buffer {
    let k = this.cache.get(purpose);
    if (!k) {
      k = Buffer.from(hkdfSync('sha256', Buffer.from(this.secret, 'utf8'), Buffer.alloc(0), `was:${purpose}`, 32));
      this.cache.set(purpose, k);
    }
    return k;
  }

  /** AES-256-GCM; output is `v1.<iv>.<tag>.<ciphertext>` in base64url. `aad` binds it to its row. */
  encrypt(plaintext: string, aad = ''): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key('encrypt'), iv);
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }

  decrypt(sealed: string, aad = ''): string {
    const [version, iv, tag, ct] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || ct === undefined) throw new Error('unrecognised sealed value');
    const decipher = createDecipheriv('aes-256-gcm', this.key('encrypt'), Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  }
}
