/**
 * The hot path keeps lexical work between decisions (parsed commands, their subjects, path-rule
 * candidates, tool-rule lookups) but never what is on disk: these tests change the disk between two
 * decisions on the same input and check that the second decision sees it.
 */
import { mkdirSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatZodError, InvalidInputError } from '../errors/index.js';
import { z } from 'zod';
import { createPermissionEngine, type PermissionEngine } from './engine.js';
import { RealPathScope, realPath } from './path-resolver.js';
import { gateCall, gateContext, tempWorkspace } from './test-support/test-fixtures.js';

let base: string;
let project: string;
let home: string;

beforeEach(() => {
  ({ base, project, home } = tempWorkspace());
  mkdirSync(path.join(project, 'src'), { recursive: true });
  mkdirSync(path.join(project, 'secrets'), { recursive: true });
  mkdirSync(path.join(base, 'outside'), { recursive: true });
  writeFileSync(path.join(project, 'secrets', 'key'), 'k');
  writeFileSync(path.join(project, 'src', 'a.ts'), 'a');
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

/** Many path rules, so the indexed (and memoised) candidate lookup is used, not the short list. */
function engineWith(extra: { rule: string; behavior: 'allow' | 'ask' | 'deny' }[] = [], mode: 'default' | 'acceptEdits' = 'default'): PermissionEngine {
  const filler = Array.from({ length: 40 }, (_, i) => ({ rule: `Read(./data${i}/**)`, behavior: 'deny' as const }));
  return createPermissionEngine({ home, projectRoot: project, mode, caseInsensitiveFs: false, rules: [...filler, { rule: 'Read(./secrets/**)', behavior: 'deny' }, ...extra] });
}

describe('real paths are resolved afresh for every decision', () => {
  it('a symlink created after a first decision on the same command is caught by the deny', async () => {
    const engine = engineWith([{ rule: 'Bash(cat *)', behavior: 'allow' }]);
    const call = gateCall('Bash', { command: 'cat notes/key' });
    expect((await engine.decide(call, gateContext(project))).behavior).toBe('allow');
    symlinkSync(path.join(project, 'secrets'), path.join(project, 'notes'));
    expect((await engine.decide(call, gateContext(project))).behavior).toBe('deny');
    // And after the link is gone again, the same command is allowed again.
    unlinkSync(path.join(project, 'notes'));
    expect((await engine.decide(call, gateContext(project))).behavior).toBe('allow');
  });

  it('a symlink to a denied file created after a first decision is caught for a bare argument and for the Read tool', async () => {
    const engine = engineWith([{ rule: 'Bash(npm test *)', behavior: 'allow' }]);
    const bash = gateCall('Bash', { command: 'npm test fixture' });
    const read = gateCall('Read', { file_path: 'fixture' });
    expect((await engine.decide(bash, gateContext(project))).behavior).toBe('allow');
    expect((await engine.decide(read, gateContext(project))).behavior).toBe('allow');
    symlinkSync(path.join(project, 'secrets', 'key'), path.join(project, 'fixture'));
    // A word that names a denied path through a link is not allowed (asked: it is only suspected).
    expect((await engine.decide(bash, gateContext(project))).behavior).not.toBe('allow');
    expect((await engine.decide(read, gateContext(project))).behavior).toBe('deny');
  });

  it('a folder replaced by a symlink after a first decision is seen through', async () => {
    const engine = engineWith([{ rule: 'Bash(cat *)', behavior: 'allow' }]);
    mkdirSync(path.join(project, 'docs'));
    writeFileSync(path.join(project, 'docs', 'key'), 'not secret');
    const call = gateCall('Bash', { command: 'cat docs/key' });
    expect((await engine.decide(call, gateContext(project))).behavior).toBe('allow');
    renameSync(path.join(project, 'docs'), path.join(project, 'docs-old'));
    symlinkSync(path.join(project, 'secrets'), path.join(project, 'docs'));
    expect((await engine.decide(call, gateContext(project))).behavior).toBe('deny');
  });

  it('a working directory that becomes a symlink after a first decision is seen through', async () => {
    const engine = engineWith([{ rule: 'Bash(cat *)', behavior: 'allow' }, { rule: 'Read(//' + path.join(base, 'outside').slice(1) + '/**)', behavior: 'deny' }]);
    const work = path.join(project, 'work');
    mkdirSync(work);
    const call = gateCall('Bash', { command: 'cat key' });
    expect((await engine.decide(call, gateContext(work))).behavior).toBe('allow');
    rmSync(work, { recursive: true });
    writeFileSync(path.join(base, 'outside', 'key'), 'k');
    symlinkSync(path.join(base, 'outside'), work);
    expect((await engine.decide(call, gateContext(work))).behavior).toBe('deny');
  });

  it('a write through a link created after a first decision leaves the project and is asked', async () => {
    const engine = engineWith([], 'acceptEdits');
    const call = gateCall('Write', { file_path: 'out/file.txt', content: 'x' });
    mkdirSync(path.join(project, 'out'));
    expect((await engine.decide(call, gateContext(project))).behavior).toBe('allow');
    rmSync(path.join(project, 'out'), { recursive: true });
    symlinkSync(path.join(base, 'outside'), path.join(project, 'out'));
    expect((await engine.decide(call, gateContext(project))).behavior).toBe('ask');
  });

  it('a dangling symlink is followed to where a write through it would land, and a write out of the project through it is refused', async () => {
    const engine = engineWith([], 'acceptEdits');
    symlinkSync(path.join(base, 'outside', 'not-yet'), path.join(project, 'dangling'));
    expect((await engine.decide(gateCall('Write', { file_path: 'dangling', content: 'x' }), gateContext(project))).behavior).toBe('deny');
    expect((await engine.decide(gateCall('Bash', { command: 'echo hi > dangling' }), gateContext(project))).behavior).toBe('deny');
    expect((await engine.decide(gateCall('Write', { file_path: 'dangling', content: 'x' }), gateContext(project))).reason).toContain('symbolic link');
    // A dangling link into a denied folder is denied like a live one.
    symlinkSync(path.join(project, 'secrets', 'new-key'), path.join(project, 'dangling-secret'));
    expect((await engine.decide(gateCall('Read', { file_path: 'dangling-secret' }), gateContext(project))).behavior).toBe('deny');
  });
});

describe('RealPathScope', () => {
  it('gives what realPath gives, for files, folders, missing paths, `.`, `..` and links', () => {
    symlinkSync(path.join(project, 'secrets'), path.join(project, 'link'));
    const cases = ['src/a.ts', 'src', 'src/.', 'missing', 'missing/deeper/x', 'src/a.ts/x', 'link', 'link/key', 'link/new', 'link/..', 'src/../secrets/key', '.'];
    const scope = new RealPathScope();
    for (const rel of cases) {
      const joined = `${project}/${rel}`;
      expect([rel, scope.resolve(joined)]).toEqual([rel, realPath(joined)]);
    }
    expect(scope.resolve('/')).toBe('/');
  });
});

describe('the hot path keeps the boundary checks and the rule order', () => {
  it('rejects a bad call or context with the same messages as the schema', async () => {
    const engine = engineWith();
    const ctxSchema = z.object({ runId: z.string(), sessionId: z.string(), userId: z.string(), channel: z.string(), cwd: z.string().min(1, 'cwd is required') }).loose();
    const callSchema = z.object({ toolCallId: z.string(), toolName: z.string().min(1), tool: z.object({ name: z.string() }).loose() }).loose();
    const expected = (schema: z.ZodType, value: unknown, what: string) => {
      const parsed = schema.safeParse(value);
      return parsed.success ? undefined : new InvalidInputError(`Invalid ${what}: ${formatZodError(parsed.error)}`).message;
    };
    const badCtx = [{ ...gateContext(project), cwd: '' }, { ...gateContext(project), userId: 7 }, null, []];
    for (const ctx of badCtx) {
      await expect(engine.decide(gateCall('Read', { file_path: 'src/a.ts' }), ctx as never)).rejects.toThrow(expected(ctxSchema, ctx, 'gate context')!);
    }
    const badCalls = [{ ...gateCall('Read', {}), toolName: '' }, { ...gateCall('Read', {}), tool: { name: 1 } }, { ...gateCall('Read', {}), toolCallId: undefined }, []];
    for (const call of badCalls) {
      await expect(engine.decide(call as never, gateContext(project))).rejects.toThrow(expected(callSchema, call, 'tool call')!);
    }
  });

  it("waits for a tool's asynchronous permission check, and asks when it throws or rejects", async () => {
    const engine = engineWith();
    const base = gateCall('Read', { file_path: 'src/a.ts' });
    const asyncDeny = { ...base, tool: { ...base.tool, checkPermissions: async () => ({ behavior: 'deny' as const, reason: 'no' }) } };
    const rejects = { ...base, tool: { ...base.tool, checkPermissions: () => Promise.reject(new Error('boom')) } };
    const throws = { ...base, tool: { ...base.tool, checkPermissions: () => { throw new Error('bang'); } } };
    expect(await engine.decide(asyncDeny, gateContext(project))).toMatchObject({ behavior: 'deny', source: 'tool' });
    expect(await engine.decide(rejects, gateContext(project))).toMatchObject({ behavior: 'ask', source: 'tool' });
    expect((await engine.decide(rejects, gateContext(project))).reason).toContain('boom');
    expect((await engine.decide(throws, gateContext(project))).reason).toContain('bang');
  });

  it('reports the first matching path rule in rule order when the candidate index is used', async () => {
    const rules = [
      ...Array.from({ length: 20 }, (_, i) => ({ rule: `Read(./data${i}/**)`, behavior: 'deny' as const })),
      { rule: 'Read(./secrets/**)', behavior: 'deny' as const },
      { rule: 'Read(**/key)', behavior: 'deny' as const },
      { rule: 'Read(./secrets/key)', behavior: 'deny' as const },
    ];
    const engine = createPermissionEngine({ home, projectRoot: project, rules, caseInsensitiveFs: false });
    for (let i = 0; i < 3; i++) {
      const decision = await engine.decide(gateCall('Read', { file_path: 'secrets/key' }), gateContext(project));
      expect(decision).toMatchObject({ behavior: 'deny', rule: 'Read(./secrets/**)' });
    }
  });

  it('a rule added after decisions were made applies to the next one (memoised lookups are dropped)', async () => {
    const engine = engineWith([{ rule: 'mcp__srv__*', behavior: 'allow' }]);
    const call = gateCall('mcp__srv__tool', {});
    expect((await engine.decide(call, gateContext(project))).behavior).toBe('allow');
    engine.addRule('mcp__srv__tool', 'deny');
    expect((await engine.decide(call, gateContext(project))).behavior).toBe('deny');
    const read = gateCall('Read', { file_path: 'src/a.ts' });
    expect((await engine.decide(read, gateContext(project))).behavior).toBe('allow');
    engine.addRule('Read(./src/**)', 'deny');
    expect((await engine.decide(read, gateContext(project))).behavior).toBe('deny');
  });
});
