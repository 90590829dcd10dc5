import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { isLoopbackHost, parseTokenList, readTokensFile, TokenAuthenticator } from './auth.js';

describe('SAGE_TOKENS', () => {
  test('maps tokens to users and roles', () => {
    expect(parseTokenList('token-A1=alice, token-B2=bob,token-C3=carol:admin')).toEqual([
      { token: 'token-A1', userId: 'alice', role: 'user' },
      { token: 'token-B2', userId: 'bob', role: 'user' },
      { token: 'token-C3', userId: 'carol', role: 'admin' },
    ]);
  });

  test.each(['token-A1', '=alice', 'token-A1=alice:root', 'token-A1=al ice', 'token-A1=alice:admin:x'])('refuses the malformed entry %j at startup', (text) => {
    expect(() => parseTokenList(text)).toThrow(/SAGE_TOKENS/);
  });

  test('refuses a token shorter than the tokens file minimum (8), at startup, without echoing it', () => {
    expect(() => parseTokenList('token-A1=alice,abc1234=bob')).toThrowError(expect.objectContaining({ code: 'server_config', message: expect.stringMatching(/for "bob" has a token of 7 characters; a token has at least 8/) }));
    expect(() => parseTokenList('abc1234=bob')).not.toThrow(/abc1234/);
    expect(() => new TokenAuthenticator([{ token: 'short', userId: 'eve', role: 'admin' }])).toThrow(/at least 8/);
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

describe('a server user is never named like a chat sender (`telegram:42`, `webhook:ci:alice`)', () => {
  test('SAGE_TOKENS: a ":" in the user is read as a role and refused, saying a user id has no ":"', () => {
    expect(() => parseTokenList('token-A1=webhook:alice')).toThrowError(expect.objectContaining({ code: 'server_config', message: expect.stringMatching(/user id has no ":"/) }));
    expect(() => parseTokenList('token-A1=telegram:42:admin')).toThrow(/user id has no ":"/);
  });

  test('a tokens file and entries built in code are refused the same way', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sage-tokens-'));
    const file = join(dir, 'tokens.json');
    writeFileSync(file, JSON.stringify({ tokens: [{ token: 'abcdefgh12', userId: 'webhook:mallory' }] }));
    expect(() => readTokensFile(file)).toThrow(/tokens\.0\.userId.*no ":"/);
    expect(() => new TokenAuthenticator([{ token: 'abcdefgh12', userId: 'webhook:mallory', role: 'user' }])).toThrowError(expect.objectContaining({ code: 'server_config', message: expect.stringMatching(/"webhook:mallory" names an invalid user.*no ":"/) }));
  });
});

describe('TokenAuthenticator', () => {
  const auth = new TokenAuthenticator(parseTokenList('token-A1=alice,token-C3=carol:admin'));

  test('resolves a bearer token to its principal', () => {
    expect(auth.authenticate('Bearer token-A1')).toEqual({ userId: 'alice', role: 'user' });
    expect(auth.authenticate('bearer token-C3')).toEqual({ userId: 'carol', role: 'admin' });
  });

  test.each([undefined, '', 'Bearer', 'Bearer token-B2', 'Token token-A1', 'Bearer token-A1 extra'])('refuses %j', (header) => {
    expect(() => auth.authenticate(header)).toThrow(expect.objectContaining({ code: 'unauthorized' }));
  });

  test('refuses the same token for two users', () => {
    expect(() => new TokenAuthenticator(parseTokenList('token-t1=alice,token-t1=bob'))).toThrow(/twice/);
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
