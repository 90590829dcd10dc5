import { describe, expect, it } from 'vitest';
import { createPermissionEngine } from './engine.js';
import { compileRule, mcpServer, ruleCoversTool } from './rule.js';
import { gateContext } from './test-support/test-fixtures.js';
import type { GateToolInfo } from './types.js';

const origin = { source: 'test', root: '/proj' };
const domain = (spec: string, behavior: 'allow' | 'deny', url: string) => compileRule(`WebFetch(domain:${spec})`, behavior, origin, '/home/u').resource!.test(url);

describe('WebFetch(domain:…) rules', () => {
  it('match the URL host exactly, never a substring, the query or user info', () => {
    expect(domain('example.com', 'allow', 'https://example.com/a')).toBe(true);
    expect(domain('example.com', 'allow', 'http://EXAMPLE.com:8080/a')).toBe(true);
    expect(domain('example.com', 'allow', 'https://example.com.evil.net/')).toBe(false);
    expect(domain('example.com', 'allow', 'https://evil.net/?example.com')).toBe(false);
    expect(domain('example.com', 'allow', 'https://example.com@evil.net/')).toBe(false);
    expect(domain('example.com', 'allow', 'https://sub.example.com/')).toBe(false);
  });

  it('*. covers subdomains; the apex only for deny and ask; an unreadable URL only for deny and ask', () => {
    expect(domain('*.example.com', 'allow', 'https://a.b.example.com/')).toBe(true);
    expect(domain('*.example.com', 'allow', 'https://example.com/')).toBe(false);
    expect(domain('*.example.com', 'deny', 'https://example.com/')).toBe(true);
    expect(domain('example.com', 'allow', 'not a url')).toBe(false);
    expect(domain('example.com', 'deny', 'not a url')).toBe(true);
  });

  it('applies to a WebFetch tool that names no permission resource, through its url input', async () => {
    const engine = createPermissionEngine({ home: '/home/u', projectRoot: '/proj', rules: [{ rule: 'WebFetch(domain:evil.net)', behavior: 'deny' }] });
    const tool: GateToolInfo = { name: 'WebFetch', readOnly: true, requiresUserInteraction: false, risk: () => 'LOW', permissionResource: () => undefined, checkPermissions: () => ({ behavior: 'passthrough' }) };
    const decision = await engine.decide({ toolCallId: 'c', toolName: 'WebFetch', input: { url: 'https://evil.net/x' }, tool }, gateContext('/proj'));
    expect(decision.behavior).toBe('deny');
  });
});

describe('tool names', () => {
  it('reads mcp__server as every tool of that server, and Agent as Task', () => {
    expect(mcpServer('mcp__github__get_issue')).toBe('mcp__github');
    expect(mcpServer('mcp__github')).toBeUndefined();
    expect(mcpServer('Bash')).toBeUndefined();
    expect(ruleCoversTool(compileRule('mcp__github', 'deny', origin, '/h'), 'mcp__github__delete_repo')).toBe(true);
    expect(ruleCoversTool(compileRule('mcp__github', 'deny', origin, '/h'), 'mcp__githubx__a')).toBe(false);
    expect(ruleCoversTool(compileRule('Agent', 'deny', origin, '/h'), 'Task')).toBe(true);
    expect(ruleCoversTool(compileRule('Task', 'deny', origin, '/h'), 'Agent')).toBe(true);
  });

  it('keeps Write(path) allow rules but lets them match nothing; a bare Edit allow is for Edit only', () => {
    const write = compileRule('Write(src/**)', 'allow', origin, '/h');
    expect(write.path!.matches('/proj/src/a.ts', '/proj', false)).toBe(false);
    expect(compileRule('Write(src/**)', 'deny', origin, '/h').path!.matches('/proj/src/a.ts', '/proj', false)).toBe(true);
    expect(compileRule('Edit', 'allow', origin, '/h').onlyTool).toBe('Edit');
    expect(compileRule('Edit', 'deny', origin, '/h').onlyTool).toBeUndefined();
  });
});
