import { describe, expect, it } from 'vitest';
import { InMemoryAuditLog } from './audit-log.js';
import { createPermissionEngine } from './engine.js';
import { gateCall, gateContext } from './test-support/test-fixtures.js';
import { InMemoryUserPermissionStore } from './user-permission-store.js';

describe('per-user permission store and audit log', () => {
  it('a stored deny beats a settings allow; a stored allow applies after the allow rules', async () => {
    const store = new InMemoryUserPermissionStore();
    await store.add('alice', 'deny', 'Bash(curl *)');
    await store.add('alice', 'allow', 'Bash(npm run lint)');
    const engine = createPermissionEngine({ home: '/nonexistent-home', projectRoot: '/tmp', userStore: store, rules: [{ rule: 'Bash(curl *)', behavior: 'allow' }] });
    const ctx = gateContext('/tmp');
    expect(await engine.decide(gateCall('Bash', { command: 'curl https://x' }), ctx)).toMatchObject({ behavior: 'deny', source: 'store' });
    expect(await engine.decide(gateCall('Bash', { command: 'npm run lint' }), ctx)).toMatchObject({ behavior: 'allow', source: 'store' });
    expect((await engine.decide(gateCall('Bash', { command: 'npm run lint' }), gateContext('/tmp', { userId: 'bob' }))).behavior).toBe('ask');
  });

  it('moving a rule between lists removes it from the other, and remove reports whether it existed', async () => {
    const store = new InMemoryUserPermissionStore();
    await store.add('u', 'allow', 'Read(x)');
    await store.add('u', 'deny', 'Read(x)');
    expect(await store.list('u')).toEqual({ allow: [], deny: ['Read(x)'] });
    expect(await store.remove('u', 'Read(x)')).toBe(true);
    expect(await store.remove('u', 'Read(x)')).toBe(false);
  });

  it('appends every decision and answer, with a timeout recorded as timed out', async () => {
    const audit = new InMemoryAuditLog();
    const engine = createPermissionEngine({ home: '/nonexistent-home', projectRoot: '/tmp', audit, clock: () => 42 });
    const ctx = gateContext('/tmp');
    const call = gateCall('Write', { file_path: 'a', content: 'secret' });
    const decision = await engine.decide(call, ctx);
    await engine.recordAnswer({ call, decision, approved: false, timedOut: true }, ctx);
    const records = await audit.query({ sessionId: 'session-1' });
    expect(records).toEqual([
      expect.objectContaining({ kind: 'decision', behavior: 'ask', source: 'risk', at: 42, toolName: 'Write' }),
      expect.objectContaining({ kind: 'answer', answer: 'timedOut' }),
    ]);
    expect(JSON.stringify(records)).not.toContain('secret');
  });

  it('an answer entry records who answered, the channel, the typed deny reason and the edited input', async () => {
    const audit = new InMemoryAuditLog();
    const engine = createPermissionEngine({ home: '/nonexistent-home', projectRoot: '/tmp', audit });
    const ctx = gateContext('/tmp', { channel: 'web' });
    const call = gateCall('Bash', { command: 'touch x.txt' });
    const decision = await engine.decide(call, ctx);
    await engine.recordAnswer({ call, decision, approved: false, userId: 'bob', message: 'not in this folder' }, ctx);
    const edited = gateCall('Bash', { command: 'touch out/x.txt' });
    await engine.recordAnswer({ call: edited, decision, approved: true, remember: 'once', userId: 'bob', updatedInput: edited.input }, ctx);
    const answers = (await audit.query()).filter((r) => r.kind === 'answer');
    expect(answers).toEqual([
      expect.objectContaining({ answer: 'rejected', userId: 'bob', channel: 'web', message: 'not in this folder' }),
      expect.objectContaining({ answer: 'approved', userId: 'bob', channel: 'web', updatedInput: { command: 'touch out/x.txt' } }),
    ]);
    expect(answers[0]).not.toHaveProperty('updatedInput');
    expect(answers[1]).not.toHaveProperty('message');
  });

  it('rejects invalid calls and contexts with a clear error', async () => {
    const engine = createPermissionEngine({ home: '/nonexistent-home' });
    await expect(engine.decide(gateCall('Bash', { command: 'ls' }), { ...gateContext('/tmp'), cwd: '' })).rejects.toThrow(/cwd/);
    expect(() => createPermissionEngine({ mode: 'yolo' as never })).toThrow(/permission mode/);
  });
});
