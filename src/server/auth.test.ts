import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { isLoopbackHost, parseTokenList, readTokensFile, TokenAuthenticator } from './auth.js';

describe('SAGE_TOKENS', () => {
  test('maps tokens to users and roles', () => {
    expect(parseTokenList('tokenA=alice, tokenB=bob,tokenC=carol:admin')).toEqual([
      { token: 'tokenA', userId: 'alice', role: 'user' },
      { token: 'tokenB', userId: 'bob', role: 'user' },
      { token: 'tokenC', userId: 'carol', role: 'admin' },
    ]);
  });

  test.each(['tokenA', '=alice', 'tokenA=alice:root', 'tokenA=al ice', 'tokenA=alice:admin:x'])('refuses the malformed entry %j at startup', (text) => {
    expect(() => parseTokenList(text)).toThrow(/SAGE_TOKENS/);
  });

  test('never echoes a whole token in an error', () => {
    expect(() => parseTokenList('supersecrettoken')).toThrow(/"su…"/);
  });
});

describe('tokens file', () => {
  test('reads users and roles; refuses short tokens', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sage-tokens-'));
    const good = join(dir, 'tokens.json');
    writeFileSync(good, JSON.stringify({ tokens: [{ token: 'abcdefgh12', userId: 'dora', role: 'admin' }] }));
    expect(readTokensFile(good)).toEqual([{ token: 'abcdefgh12', userId: 'dora', role: 'admin' }]);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ tokens: [{ token: 'x', userId: 'dora' }] }));
    expect(() => readTokensFile(bad)).toThrow(/tokens\.0\.token/);
    expect(() => readTokensFile(join(dir, 'missing.json'))).toThrow(/Cannot read/);
  });
});

describe('TokenAuthenticator', () => {
  const auth = new TokenAuthenticator(parseTokenList('tokenA=alice,tokenC=carol:admin'));

  test('resolves a bearer token to its principal', () => {
    expect(auth.authenticate('Bearer tokenA')).toEqual({ userId: 'alice', role: 'user' });
    expect(auth.authenticate('bearer tokenC')).toEqual({ userId: 'carol', role: 'admin' });
  });

  test.each([undefined, '', 'Bearer', 'Bearer tokenB', 'Token tokenA', 'Bearer tokenA extra'])('refuses %j', (header) => {
    expect(() => auth.authenticate(header)).toThrow(expect.objectContaining({ code: 'unauthorized' }));
  });

  test('refuses the same token for two users', () => {
    expect(() => new TokenAuthenticator(parseTokenList('t1=alice,t1=bob'))).toThrow(/twice/);
  });
});

test.each([
  ['127.0.0.1', true],
  ['127.1.2.3', true],
  ['localhost', true],
  ['::1', true],
  ['[::1]', true],
  ['0.0.0.0', false],
  ['192.168.1.10', false],
  ['::', false],
])('isLoopbackHost(%s) is %s', (host, expected) => {
  expect(isLoopbackHost(host)).toBe(expected);
});
