import { createCipheriv, createDecipheriv, createHmac } from 'node:crypto';
import * as E from 'fp-ts/lib/Either.js';
import type { SecretBox } from '@esig/core';
import { pooledRandomBytes } from './random.js';

/**
 * AES-256-GCM under a key derived from the master key (so the master key itself encrypts nothing
 * directly and other uses can derive their own). Format: `v1.<iv>.<ciphertext>.<tag>`, base64url parts.
 * A fresh 96-bit IV per seal; the tag authenticates, so a tampered or foreign value does not open.
 */
export const createAesGcmSecretBox = (masterKey: Uint8Array): SecretBox => {
  if (masterKey.byteLength !== 32) throw new Error('the master key must be 32 bytes');
  const key = createHmac('sha256', masterKey).update('esig:secret-box:v1').digest();
  return {
    seal: (plaintext) => {
      // From the pool of CSPRNG bytes, each handed out once: a fresh IV without a system call per seal.
      const bytes = pooledRandomBytes(12);
      const iv = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), ct.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    open: (sealed) =>
      E.tryCatch(
        () => {
          const [v, iv, ct, tag] = sealed.split('.');
          if (v !== 'v1' || !iv || ct === undefined || !tag) throw new Error('format');
          const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
          decipher.setAuthTag(Buffer.from(tag, 'base64url'));
          return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
        },
        () => ({ _tag: 'SecretUnreadable' as const }),
      ),
  };
};
