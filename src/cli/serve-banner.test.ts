import { describe, expect, it } from 'vitest';
import { channelBannerLines, shownUrl } from './serve-banner.js';

describe("sage serve's channel banner", () => {
  it('gives each channel its whole inbound URL on this server and its outbound URL', () => {
    const lines = channelBannerLines('http://127.0.0.1:7878', [
      'webhook:ci: inbound POST /channels/webhook/ci, outbound https://ci.example.org',
      'slack: @sage in Acme via https://slack.com/api/ (Socket Mode)',
    ], [
      { channel: 'webhook:ci', inbound: [{ method: 'POST', path: '/channels/webhook/ci' }], outbound: 'https://ci.example.org/sage/hook' },
      { channel: 'slack', inbound: [], outbound: 'https://slack.com/api/' },
    ]);
    expect(lines).toEqual([
      'channel webhook:ci: inbound POST /channels/webhook/ci, outbound https://ci.example.org',
      '  inbound  POST http://127.0.0.1:7878/channels/webhook/ci',
      '  outbound https://ci.example.org/sage/hook',
      'channel slack: @sage in Acme via https://slack.com/api/ (Socket Mode)',
      '  outbound https://slack.com/api/',
    ]);
  });

  it('never prints a password or a query value an outbound URL may carry', () => {
    expect(shownUrl('https://bot:s3cret@relay.example.org:8443/hook?token=abc&x=1')).toBe('https://***@relay.example.org:8443/hook?token=***&x=***');
    expect(shownUrl('http://127.0.0.1:9000/hook')).toBe('http://127.0.0.1:9000/hook');
  });
});
