import { mkdirSync, rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createPermissionEngine } from './engine.js';
import { gateCall, gateContext, tempWorkspace } from './test-support/test-fixtures.js';

const ws = tempWorkspace();
mkdirSync(ws.project, { recursive: true });
afterAll(() => rmSync(ws.base, { recursive: true, force: true }));
const ctx = gateContext(ws.project);
const deny = [{ rule: 'Bash(rm -rf *)', behavior: 'deny' as const }];

describe('PreToolUse hooks', () => {
  it('a function hook may allow, but its allow is still subject to deny rules', async () => {
    const engine = createPermissionEngine({ home: ws.home, projectRoot: ws.project, rules: deny, hooks: { preToolUse: [{ run: () => ({ decision: 'allow', reason: 'trusted' }) }] } });
    expect(await engine.decide(gateCall('Bash', { command: 'frobnicate' }), ctx)).toMatchObject({ behavior: 'allow', source: 'hook' });
    expect(await engine.decide(gateCall('Bash', { command: 'rm -rf x' }), ctx)).toMatchObject({ behavior: 'deny', source: 'rule' });
  });

  it('a hook allow does not override an ask rule', async () => {
    const engine = createPermissionEngine({ home: ws.home, projectRoot: ws.project, rules: [{ rule: 'Bash(git push *)', behavior: 'ask' }], hooks: { preToolUse: [{ run: () => ({ decision: 'allow' }) }] } });
    expect((await engine.decide(gateCall('Bash', { command: 'git push' }), ctx)).behavior).toBe('ask');
  });

  it('a hook may deny', async () => {
    const engine = createPermissionEngine({ home: ws.home, projectRoot: ws.project, hooks: { preToolUse: [{ matcher: 'Bash', run: () => ({ decision: 'deny', reason: 'no shell today' }) }] } });
    expect(await engine.decide(gateCall('Bash', { command: 'ls' }), ctx)).toMatchObject({ behavior: 'deny', source: 'hook' });
    expect((await engine.decide(gateCall('Read', { file_path: 'a' }), ctx)).behavior).toBe('allow');
  });

  it('a rewritten input is checked again from the start', async () => {
    const engine = createPermissionEngine({ home: ws.home, projectRoot: ws.project, rules: deny, hooks: { preToolUse: [{ run: () => ({ decision: 'allow', updatedInput: { command: 'rm -rf build' } }) }] } });
    const decision = await engine.decide(gateCall('Bash', { command: 'ls' }), ctx);
    expect(decision).toMatchObject({ behavior: 'deny', updatedInput: { command: 'rm -rf build' } });
  });

  it('a failing hook never allows', async () => {
    const engine = createPermissionEngine({ home: ws.home, projectRoot: ws.project, hooks: { preToolUse: [{ run: () => { throw new Error('boom'); } }] } });
    expect(await engine.decide(gateCall('Read', { file_path: 'a' }), ctx)).toMatchObject({ behavior: 'ask', source: 'hook' });
  });

  it('a hanging hook times out and never allows', async () => {
    const engine = createPermissionEngine({ home: ws.home, projectRoot: ws.project, mode: 'bypassPermissions', hooks: { preToolUse: [{ timeoutMs: 50, run: () => new Promise(() => undefined) }] } });
    const decision = await engine.decide(gateCall('Read', { file_path: 'a' }), ctx);
    expect(decision.behavior).toBe('ask');
    expect(decision.reason).toContain('no answer within');
  });

  it('a shell command hook reads the call on stdin and answers JSON', async () => {
    const script = `node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const e=JSON.parse(s);console.log(JSON.stringify({hookSpecificOutput:{permissionDecision:e.tool_input.command.includes("publish")?"deny":"allow",permissionDecisionReason:"by script"}}))})'`;
    const engine = createPermissionEngine({ home: ws.home, projectRoot: ws.project, hooks: { preToolUse: [{ command: script }] } });
    expect(await engine.decide(gateCall('Bash', { command: 'npm publish' }), ctx)).toMatchObject({ behavior: 'deny', source: 'hook' });
    expect(await engine.decide(gateCall('Bash', { command: 'npm test' }), ctx)).toMatchObject({ behavior: 'allow', source: 'hook' });
  });

  it('a shell hook exiting 2 blocks; one that hangs is killed and asks', async () => {
    const blocking = createPermissionEngine({ home: ws.home, projectRoot: ws.project, hooks: { preToolUse: [{ command: 'echo nope >&2; exit 2' }] } });
    expect(await blocking.decide(gateCall('Read', { file_path: 'a' }), ctx)).toMatchObject({ behavior: 'deny', reason: expect.stringContaining('nope') });
    const hanging = createPermissionEngine({ home: ws.home, projectRoot: ws.project, hooks: { preToolUse: [{ command: 'sleep 30', timeoutMs: 200 }] } });
    expect((await hanging.decide(gateCall('Read', { file_path: 'a' }), ctx)).behavior).toBe('ask');
  });
});
