import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { serveWebFile } from './static-files.js';
import { startHarness } from './test-support/harness.js';

function webRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'sage-webroot-'));
  mkdirSync(join(root, 'assets'));
  writeFileSync(join(root, 'index.html'), '<!doctype html><title>Sage</title>');
  writeFileSync(join(root, 'assets', 'app-abc123.js'), 'console.log(1)');
  writeFileSync(join(root, '..', 'secret.txt'), 'not for the web');
  return root;
}

describe('serving the built UI', () => {
  test('index at /, hashed assets cached for ever, index never cached', async () => {
    const root = webRoot();
    const index = (await serveWebFile(root, '/'))!;
    expect(index.headers.get('content-type')).toMatch(/text\/html/);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const asset = (await serveWebFile(root, '/assets/app-abc123.js'))!;
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect(await serveWebFile(root, '/nope.js')).toBeUndefined();
  });

  test.each(['/../secret.txt', '/%2e%2e/secret.txt', '/assets/../../secret.txt', '/%E0%A4%A'])('never leaves the root: %s', async (path) => {
    expect(await serveWebFile(webRoot(), path)).toBeUndefined();
  });

  test('the server sends the UI with security headers; API paths stay JSON', async () => {
    const h = await startHarness({ webRoot: webRoot() });
    try {
      const res = await fetch(`${h.url}/`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('<title>Sage</title>');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      const api = await h.api('nobody', 'GET', '/runs');
      expect(api.status).toBe(401);
      const missing = await h.api('nobody', 'GET', '/missing.js');
      expect(missing.body.error.code).toBe('route_not_found');
    } finally {
      await h.close();
    }
  });
});
