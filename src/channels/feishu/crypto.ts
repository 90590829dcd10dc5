import { createDecipheriv, createHash, timingSafeEqual } from 'node:crypto';

/**
 * Feishu/Lark event endpoint security. With an Encrypt Key, each body is `{"encrypt": base64}`:
 * AES-256-CBC, key = SHA-256(encrypt key), the first 16 bytes are the IV; and each request is signed
 * `X-Lark-Signature = hex SHA-256(timestamp + nonce + encrypt key + raw body)`. The SDK's own check
 * signs a re-serialised body and skips the token, so Sage checks the raw bytes itself.
 */

export function decryptFeishu(encrypted: string, encryptKey: string): string {
  const key = createHash('sha256').update(encryptKey).digest();
  const data = Buffer.from(encrypted, 'base64');
  if (data.length < 32) throw new Error('encrypted payload too short');
  const decipher = createDecipheriv('aes-256-cbc', key, data.subarray(0, 16));
  return Buffer.concat([decipher.update(data.subarray(16)), decipher.final()]).toString('utf8');
}

export function feishuSignature(timestamp: string, nonce: string, encryptKey: string, rawBody: string): string {
  return createHash('sha256').update(timestamp + nonce + encryptKey + rawBody).digest('hex');
}

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
