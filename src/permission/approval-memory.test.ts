import { mkdirSync, rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalMemory } from './approval-memory.js';
import { createPermissionEngine } from './engine.js';
import { gateCall, gateContext, tempWorkspace } from './test-support/test-fixtures.js';

const ws = tempWorkspace();
mkdirSync(ws.project, { recursive: true });
afterEach(() => undefined);
process.on('exit', () => rmSync(ws.base, { recursive: true, force: true }));

describe('session approval memory', () => {
  it('keys on the whole input: inputs that differ only after 200 characters do not share an approval', () => {
    const long = 'x'.repeat(300);
    const a = ApprovalMemory.key('cli', 'chat', 'Write', { content: `${long}a` });
    const b = ApprovalMemory.key('cli', 'chat', 'Write', { content: `${long}b` });
    expect(a).not.toBe(b);
    expect(ApprovalMemory.key('cli', 'chat', 'Write', { b: 1, a: 2 })).toBe(ApprovalMemory.key('cli', 'chat', 'Write', { a: 2, b: 1 }));
  });

  it('remembers an approved MEDIUM call until the window expires (fake clock)', async () => {
    let now = 1_000_000;
    const engine = createPermissionEngine({ home: ws.home, projectRoot: ws.project, clock: () => now, approval: { memoryWindowSeconds: 300 } });
    const ctx = gateContext(ws.project);
    const call = gateCall('Write', { file_path: 'a.txt', content: 'hello' });
    const first = await engine.decide(call, ctx);
    expect(first).toMatchObject({ behavior: 'ask', source: 'risk', risk: 'MEDIUM' });
    await engine.recordAnswer({ call, decision: first, approved: true }, ctx);
    expect(await engine.decide(call, ctx)).toMatchObject({ behavior: 'allow', source: 'memory' });
    // A different input is asked again: the approval is bound to what the person saw.
    expect((await engine.decide(gateCall('Write', { file_path: 'a.txt', content: 'hello!' }), ctx)).behavior).toBe('ask');
    // Another session does not share it.
    expect((await engine.decide(call, gateContext(ws.project, { sessionId: 'other' }))).behavior).toBe('ask');
    now += 299_000;
    expect((await engine.decide(call, ctx)).behavior).toBe('allow');
    now += 1_000;
    expect(await engine.decide(call, ctx)).toMatchObject({ behavior: 'ask', source: 'risk' });
  });

  it('never remembers HIGH risk, rejections, timeouts or strict mode approvals', async () => {
    const ctx = gateContext(ws.project);
    const engine = createPermissionEngine({ home: ws.home, projectRoot: ws.project });
    const high = gateCall('Bash', { command: 'frobnicate --all' });
    const d = await engine.decide(high, ctx);
    await engine.recordAnswer({ call: high, decision: d, approved: true }, ctx);
    expect((await engine.decide(high, ctx)).behavior).toBe('ask');

    const write = gateCall('Write', { file_path: 'b.txt', content: 'x' });
    const w = await engine.decide(write, ctx);
    await engine.recordAnswer({ call: write, decision: w, approved: false }, ctx);
    await engine.recordAnswer({ call: write, decision: w, approved: true, timedOut: true }, ctx);
    expect((await engine.decide(write, ctx)).behavior).toBe('ask');

    const strict = createPermissionEngine({ home: ws.home, projectRoot: ws.project, approval: { strictMode: true } });
    const s = await strict.decide(write, ctx);
    await strict.recordAnswer({ call: write, decision: s, approved: true }, ctx);
    expect((await strict.decide(write, ctx)).behavior).toBe('ask');
  });
});
