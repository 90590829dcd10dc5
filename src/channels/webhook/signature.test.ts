import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhookSignature, webhookSignatureHeaders } from './signature.js';

const SECRET = 'sig-secret';
const body = Buffer.from('{"chatId":"chat1","senderId":"alice","text":"yes"}');
const NOW = 1_750_000_000_000;
const ts = Math.floor(NOW / 1000);
const check = (headers: { timestamp: string | null; signature: string | null }, at = NOW, raw: Uint8Array = body) => verifyWebhookSignature(SECRET, headers, raw, at);

describe('the webhook signature: HMAC-SHA256(secret, "<timestamp>.<raw body>")', () => {
  it('is the documented HMAC, and what webhookSignatureHeaders sends', () => {
    const expected = `sha256=${createHmac('sha256', SECRET).update(`${ts}.${body.toString()}`).digest('hex')}`;
    expect(signWebhook(SECRET, ts, body)).toBe(expected);
    expect(webhookSignatureHeaders(SECRET, body, NOW)).toEqual({ 'x-sage-timestamp': String(ts), 'x-sage-signature': expected });
    expect(check({ timestamp: String(ts), signature: expected })).toEqual({ ok: true, timestamp: ts, digest: expected.slice(7) });
  });

  it('refuses, naming what is wrong and never the expected signature: no timestamp, a malformed one, no signature, a wrong one, another body, another time', () => {
    const good = signWebhook(SECRET, ts, body);
    const refusals = [
      check({ timestamp: null, signature: good }),
      check({ timestamp: '17.5e8', signature: good }),
      check({ timestamp: '-5', signature: good }),
      check({ timestamp: String(ts), signature: null }),
      check({ timestamp: String(ts), signature: `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}` }),
      check({ timestamp: String(ts), signature: signWebhook('another-secret', ts, body) }),
      check({ timestamp: String(ts), signature: good }, NOW, Buffer.from('{"chatId":"chat1","senderId":"alice","text":"no"}')),
      // A captured request given a fresh time: the timestamp is signed with the body.
      check({ timestamp: String(ts + 60), signature: good }, NOW + 60_000),
    ];
    expect(refusals.map((r) => (r.ok ? 'ok' : r.code))).toEqual(['missing_timestamp', 'bad_timestamp', 'bad_timestamp', 'missing_signature', 'bad_signature', 'bad_signature', 'bad_signature', 'bad_signature']);
    for (const r of refusals) {
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.message).not.toContain(good.slice(7, 20));
    }
  });

  it('takes a timestamp up to 300 s either side of the clock, and refuses one further, saying how far', () => {
    const at = (seconds: number) => ({ timestamp: String(seconds), signature: signWebhook(SECRET, seconds, body) });
    expect(check(at(ts - 300)).ok).toBe(true);
    expect(check(at(ts + 300)).ok).toBe(true);
    const old = check(at(ts - 301));
    const ahead = check(at(ts + 900));
    expect(old).toMatchObject({ ok: false, code: 'stale_timestamp', message: expect.stringContaining("301 s from the server's clock (at most 300 s)") });
    expect(ahead).toMatchObject({ ok: false, code: 'stale_timestamp', message: expect.stringContaining("900 s from the server's clock") });
  });
});
