import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The generic webhook's signature, both directions: `X-Sage-Timestamp: <unix seconds>` and
 * `X-Sage-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>`. The timestamp is
 * signed with the body, so a captured request cannot be given a fresh time; a receiver refuses one
 * more than `SIGNATURE_WINDOW_SECONDS` from its clock and one whose signature it already took
 * within that window, so a capture is worth nothing once seen or once old.
 */
export const TIMESTAMP_HEADER = 'x-sage-timestamp';
export const SIGNATURE_HEADER = 'x-sage-signature';
/** How far a signing time may be from the receiver's clock, either way. */
export const SIGNATURE_WINDOW_SECONDS = 300;

const TIMESTAMP_FORMAT = /^\d{1,12}$/;
const SIGNATURE_FORMAT = /^sha256=([0-9a-f]{64})$/;

/** `sha256=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>`. */
export function signWebhook(secret: string, timestamp: number, body: string | Uint8Array): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`;
}

/** The two headers for a body sent at `nowMs`: a new timestamp (and so a new signature) every time, retries included. */
export function webhookSignatureHeaders(secret: string, body: string | Uint8Array, nowMs: number): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  return { [TIMESTAMP_HEADER]: String(timestamp), [SIGNATURE_HEADER]: signWebhook(secret, timestamp, body) };
}

export type WebhookSignatureCheck =
  | { ok: true; timestamp: number; /** The signature's hex digest: what a receiver remembers to refuse a replay. */ digest: string }
  | { ok: false; code: 'missing_timestamp' | 'bad_timestamp' | 'missing_signature' | 'bad_signature' | 'stale_timestamp'; message: string };

/**
 * Checks a request's two headers against its raw body and the receiver's clock. The refusal says
 * what is wrong (which header, how far off the clock is) and never what the signature should have
 * been. The signature is checked before the time, so only a holder of the secret learns the offset.
 */
export function verifyWebhookSignature(secret: string, headers: { timestamp: string | null; signature: string | null }, body: Uint8Array, nowMs: number): WebhookSignatureCheck {
  const stamp = headers.timestamp?.trim();
  if (!stamp) {
    return { ok: false, code: 'missing_timestamp', message: 'X-Sage-Timestamp is missing: send the signing time in unix seconds, and sign "<timestamp>.<raw body>".' };
  }
  if (!TIMESTAMP_FORMAT.test(stamp)) return { ok: false, code: 'bad_timestamp', message: 'X-Sage-Timestamp must be the signing time in whole unix seconds (digits only).' };
  const given = headers.signature?.trim();
  if (!given) return { ok: false, code: 'missing_signature', message: 'X-Sage-Signature is missing: send sha256=<hex HMAC-SHA256 of "<X-Sage-Timestamp>.<raw body>"> made with this channel\'s secret.' };
  const timestamp = Number(stamp);
  const expected = Buffer.from(signWebhook(secret, timestamp, body));
  const actual = Buffer.from(given.toLowerCase());
  if (!SIGNATURE_FORMAT.test(given.toLowerCase()) || actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
    return { ok: false, code: 'bad_signature', message: 'X-Sage-Signature does not match: it must be sha256=<hex HMAC-SHA256 of "<X-Sage-Timestamp>.<raw body>"> made with this channel\'s secret, over the exact bytes sent.' };
  }
  const offset = Math.abs(Math.floor(nowMs / 1000) - timestamp);
  if (offset > SIGNATURE_WINDOW_SECONDS) {
    return { ok: false, code: 'stale_timestamp', message: `X-Sage-Timestamp is ${offset} s from the server's clock (at most ${SIGNATURE_WINDOW_SECONDS} s): sign each request when it is sent (a retry too), and check the sender's clock.` };
  }
  return { ok: true, timestamp, digest: given.toLowerCase().slice('sha256='.length) };
}
