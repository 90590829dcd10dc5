import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinToolInfo } from './builtin-tool-traits.js';
import { CONFORMANCE_CASES, type ConformanceCase } from './test-support/conformance-cases.js';
import { createPermissionEngine } from './engine.js';

let base: string;
let project: string;
let home: string;

beforeAll(() => {
  base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'sage-perm-')));
  project = path.join(base, 'proj');
  home = path.join(base, 'home');
  for (const dir of ['src/deep', 'secrets', 'protected', 'build', '.git', 'extra']) mkdirSync(path.join(project, dir), { recursive: true });
  mkdirSync(path.join(home, 'extra'), { recursive: true });
  writeFileSync(path.join(project, 'src/a.ts'), 'a');
  writeFileSync(path.join(project, '.env'), 'KEY=1');
  writeFileSync(path.join(project, 'secrets/key'), 'k');
  writeFileSync(path.join(project, 'caf\u00e9.txt'), 'c');
  symlinkSync(path.join(project, 'secrets'), path.join(project, 'link-to-secrets'));
  symlinkSync(path.join(project, 'protected'), path.join(project, 'link-to-protected'));
  symlinkSync('/etc', path.join(project, 'etc-link'));
  mkdirSync(path.join(home, '.ssh'), { recursive: true });
  writeFileSync(path.join(home, '.ssh', 'id_rsa'), 'private');
  writeFileSync(path.join(home, '.bashrc'), '');
  mkdirSync(path.join(project, 'config'), { recursive: true });
  writeFileSync(path.join(project, 'config', '.env'), 'KEY=2');
  symlinkSync(path.join(home, '.ssh'), path.join(project, 'ssh-link'));
  symlinkSync(path.join(base, 'outside', 'not-there'), path.join(project, 'dangling-out'));
  symlinkSync(path.join(project, 'missing-inside.txt'), path.join(project, 'dangling-in'));
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

function substitute(value: unknown): unknown {
  if (typeof value === 'string') return value.replaceAll('%P%', project).replaceAll('%H%', home);
  if (Array.isArray(value)) return value.map(substitute);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v)]));
  return value;
}

async function decide(c: ConformanceCase) {
  const rules = (['allow', 'ask', 'deny'] as const).flatMap((behavior) => (c.rules?.[behavior] ?? []).map((rule) => ({ rule, behavior, source: 'test' })));
  const engine = createPermissionEngine({ home, projectRoot: project, additionalDirectories: [path.join(home, 'extra')], mode: c.mode ?? 'default', rules, caseInsensitiveFs: false });
  const ctx = { runId: 'run', sessionId: 'session', userId: 'user', channel: 'test', cwd: project };
  return engine.decide({ toolCallId: 'call', toolName: c.tool, input: substitute(c.input), tool: builtinToolInfo(c.tool) }, ctx);
}

describe('permission conformance table', () => {
  it('has at least 150 cases, 50 of them attempts to get past a deny rule', () => {
    expect(CONFORMANCE_CASES.length).toBeGreaterThanOrEqual(150);
    expect(CONFORMANCE_CASES.filter((c) => c.bypass).length).toBeGreaterThanOrEqual(50);
  });

  it.each(CONFORMANCE_CASES.map((c) => [c.bypass ? `bypass: ${c.name}` : c.name, c] as const))('%s', async (_name, c) => {
    const decision = await decide(c);
    expect({ behavior: decision.behavior, reason: decision.reason }).toMatchObject({ behavior: c.expect });
  });
});
