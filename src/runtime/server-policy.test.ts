import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { ServerConfigError } from './errors.js';
import { DEFAULT_CLIENT_MODES, PolicyForbiddenError, resolveServerPolicy, ServerPolicy } from './server-policy.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sage-policy-'));
  dirs.push(dir);
  return dir;
}

function writeJson(file: string, value: unknown): string {
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
}

/** A host with SAGE_HOME in a temp folder (and, unless given, no managed file). */
function host(files: { user?: unknown; managed?: unknown } = {}) {
  const sageHome = tempDir();
  const env: NodeJS.ProcessEnv = { SAGE_HOME: sageHome };
  if (files.user !== undefined) writeJson(join(sageHome, '.sage', 'settings.json'), files.user);
  if (files.managed !== undefined) env['SAGE_MANAGED_SETTINGS'] = writeJson(join(tempDir(), 'managed.json'), files.managed);
  return { env, sageHome };
}

function usageError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toMatchObject({ code: 'invalid_input' });
    return `${(error as { field?: string }).field} | ${(error as Error).message}`;
  }
  throw new Error('expected an InvalidInputError');
}

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(ServerConfigError.isInstance(error)).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected a ServerConfigError');
}

describe('the default policy', () => {
  test('clients may ask for every mode but bypassPermissions, and only admins add allow rules', () => {
    const policy = resolveServerPolicy({ env: host().env });
    expect(policy.permissionModes).toEqual(DEFAULT_CLIENT_MODES);
    expect(policy.modeFor(undefined)).toBe('default');
    expect(() => policy.modeFor('bypassPermissions')).toThrow(PolicyForbiddenError);
    expect(policy.mayAddAllowRules('user')).toBe(false);
    expect(policy.mayAddAllowRules('admin')).toBe(true);
    expect(policy.rules()).toEqual([]);
  });

  test('a 403 names what the operator allows', () => {
    const policy = new ServerPolicy({ permissionModes: ['plan'] });
    expect(policy.modeFor(undefined)).toBe('plan');
    try {
      policy.modeFor('acceptEdits');
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ code: 'policy_forbidden', field: 'permissionMode', message: 'permissionMode "acceptEdits" is not allowed on this server; the operator allows plan.' });
    }
  });
});

describe('a policy built in code is validated too', () => {
  test('no modes, an unknown mode, a malformed rule or an unknown key is a ServerConfigError', () => {
    expect(configError(() => new ServerPolicy({ permissionModes: [] }))).toContain('list at least one permission mode');
    expect(configError(() => new ServerPolicy({ permissionModes: ['root' as never] }))).toContain('a permission mode is one of');
    expect(configError(() => new ServerPolicy({ deny: ['Read(('] }))).toContain('Invalid server policy');
    expect(configError(() => new ServerPolicy({ allowAll: true } as never))).toContain('allowAll');
  });
});

describe('sage serve flags are validated', () => {
  test('an unknown mode is refused, naming the valid ones', () => {
    const message = usageError(() => resolveServerPolicy({ env: host().env, flags: { permissionModes: 'default,sudo' } }));
    expect(message).toContain('--permission-modes | Invalid --permission-modes');
    expect(message).toContain('a permission mode is one of default, acceptEdits, plan, bypassPermissions, dontAsk');
  });

  test('an empty mode list is refused', () => {
    expect(usageError(() => resolveServerPolicy({ env: host().env, flags: { permissionModes: ' , ' } }))).toContain('list at least one permission mode');
  });

  test('a malformed deny or ask rule stops the server instead of being skipped', () => {
    expect(usageError(() => resolveServerPolicy({ env: host().env, flags: { deny: ['Bash(echo *'] } }))).toMatch(/^--deny \| Invalid --deny: /);
    expect(usageError(() => resolveServerPolicy({ env: host().env, flags: { ask: [''] } }))).toContain('a rule cannot be empty');
  });

  test('valid flags apply: modes, client allow rules, server-wide deny and ask', () => {
    const policy = resolveServerPolicy({ env: host().env, flags: { permissionModes: 'default, bypassPermissions', allowClientRules: true, deny: ['Bash(rm *)'], ask: ['Bash(git push *)'] } });
    expect(policy.permissionModes).toEqual(['default', 'bypassPermissions']);
    expect(policy.clientAllowRules).toBe(true);
    expect(policy.rules()).toEqual([
      { rule: 'Bash(rm *)', behavior: 'deny', source: 'server policy' },
      { rule: 'Bash(git push *)', behavior: 'ask', source: 'server policy' },
    ]);
  });
});

describe('the server key of the settings files', () => {
  test('the host user\'s file is read under SAGE_HOME; flags win over it; deny lists add up', () => {
    const { env } = host({ user: { server: { permissionModes: ['plan'], clientAllowRules: true, deny: ['Read(.env)'] } } });
    const fromFile = resolveServerPolicy({ env });
    expect(fromFile.permissionModes).toEqual(['plan']);
    expect(fromFile.clientAllowRules).toBe(true);
    const withFlags = resolveServerPolicy({ env, flags: { permissionModes: 'default', allowClientRules: false, deny: ['Bash(rm *)'] } });
    expect(withFlags.permissionModes).toEqual(['default']);
    expect(withFlags.clientAllowRules).toBe(false);
    expect(withFlags.deny).toEqual(['Bash(rm *)', 'Read(.env)']);
  });

  test('the managed file is a ceiling: a flag or user file cannot raise it', () => {
    const managed = { server: { permissionModes: ['default', 'plan'], clientAllowRules: false, deny: ['Bash(curl *)'] } };
    const { env } = host({ managed, user: { server: { permissionModes: ['default', 'bypassPermissions'], clientAllowRules: true } } });
    const policy = resolveServerPolicy({ env });
    expect(policy.permissionModes).toEqual(['default']);
    expect(policy.clientAllowRules).toBe(false);
    expect(policy.deny).toEqual(['Bash(curl *)']);
    expect(configError(() => resolveServerPolicy({ env, flags: { permissionModes: 'default,bypassPermissions' } }))).toMatch(/--permission-modes names bypassPermissions, which the managed settings .* do not allow; they allow default, plan/);
    expect(configError(() => resolveServerPolicy({ env, flags: { allowClientRules: true } }))).toContain('--allow-client-rules is refused');
  });

  test('managed permissions.disableBypassPermissionsMode "disable" takes bypassPermissions away from every other source', () => {
    const { env } = host({ managed: { permissions: { disableBypassPermissionsMode: 'disable' } }, user: { server: { permissionModes: ['default', 'bypassPermissions'] } } });
    expect(resolveServerPolicy({ env }).permissionModes).toEqual(['default']);
    expect(configError(() => resolveServerPolicy({ env, flags: { permissionModes: 'bypassPermissions' } }))).toContain('disable (permissions.disableBypassPermissionsMode)');
  });

  test('a broken file stops the server, naming the file and the field', () => {
    const broken = host({ user: '{ "server": { "deny": ["Bash(rm *)"], } }' });
    expect(configError(() => resolveServerPolicy({ env: broken.env }))).toContain(join(broken.sageHome, '.sage', 'settings.json'));
    expect(configError(() => resolveServerPolicy({ env: host({ user: { server: { permissionModes: ['root'] } } }).env }))).toContain('"server.permissionModes.0"');
    expect(configError(() => resolveServerPolicy({ env: host({ user: { server: { allowEverything: true } } }).env }))).toContain('allowEverything');
    expect(configError(() => resolveServerPolicy({ env: host({ managed: { permissions: { deny: ['Bash(rm *'] } } }).env }))).toMatch(/managed settings file .* does not load: permissions\.deny\[0\]/);
  });

  test('a managed file named by SAGE_MANAGED_SETTINGS must exist', () => {
    expect(configError(() => resolveServerPolicy({ env: { SAGE_HOME: tempDir(), SAGE_MANAGED_SETTINGS: join(tempDir(), 'missing.json') } }))).toContain('does not exist');
  });
});

describe('the host settings a web run gets', () => {
  test('every deny and ask rule, allow rules only from the managed file, and no defaultMode', () => {
    const project = tempDir();
    writeJson(join(project, '.sage', 'settings.json'), { permissions: { deny: ['Read(./secret.txt)'], allow: ['Bash'], defaultMode: 'bypassPermissions' } });
    const { env } = host({
      managed: { permissions: { allow: ['Bash(npm test)'], deny: ['Bash(curl *)'] } },
      user: { permissions: { allow: ['Bash(git *)'], ask: ['Bash(git push *)'], defaultMode: 'bypassPermissions' } },
    });
    const settings = resolveServerPolicy({ env }).settingsFor(project)!;
    const rules = settings.rules.map((r) => `${r.behavior} ${r.rule}`).sort();
    expect(rules).toEqual(['allow Bash(npm test)', 'ask Bash(git push *)', 'deny Bash(curl *)', 'deny Read(./secret.txt)']);
    expect(settings.defaultMode).toBeUndefined();
  });

  test('a policy built without settings reads no file', () => {
    expect(new ServerPolicy().settingsFor(tempDir())).toBeUndefined();
  });
});

describe('a stored run under the current policy', () => {
  test('a mode no longer allowed falls back to the default; allow rules only while its owner may add them', () => {
    const strict = new ServerPolicy();
    expect(strict.currentFor({ permissionMode: 'bypassPermissions', allow: ['Bash'] }, 'user')).toEqual({ mode: 'default', allow: [] });
    expect(strict.currentFor({ permissionMode: 'plan', allow: ['Bash'] }, 'admin')).toEqual({ mode: 'plan', allow: ['Bash'] });
    expect(new ServerPolicy({ permissionModes: ['dontAsk'], clientAllowRules: true }).currentFor({ permissionMode: 'acceptEdits', allow: ['Read'] }, 'user')).toEqual({ mode: 'dontAsk', allow: ['Read'] });
  });
});

describe('per-user rule edits', () => {
  const alice = { userId: 'alice', role: 'user' as const };
  const admin = { userId: 'carol', role: 'admin' as const };
  const deny = (createdBy: string | null) => ({ userId: 'alice', rule: 'Bash(rm *)', behavior: 'deny' as const, createdAt: '2026-01-01T00:00:00.000Z', createdBy });

  test('a deny made by someone else (or by nobody known) is the admins\' to remove', () => {
    const policy = new ServerPolicy({ clientAllowRules: true });
    expect(() => policy.checkUserRuleRemove(alice, deny('carol'))).toThrow(/added by "carol"; only an admin may remove it/);
    expect(() => policy.checkUserRuleRemove(alice, deny(null))).toThrow(/added by an administrator/);
    expect(() => policy.checkUserRuleRemove(alice, deny('alice'))).not.toThrow();
    expect(() => policy.checkUserRuleRemove(admin, deny('carol'))).not.toThrow();
    expect(() => policy.checkUserRuleAdd(alice, 'alice', 'Bash(rm *)', 'allow', [deny('carol')])).toThrow(PolicyForbiddenError);
    expect(() => policy.checkUserRuleAdd(alice, 'alice', 'Bash(rm *)', 'allow', [deny('alice')])).not.toThrow();
  });

  test('denies are always welcome; allows only when the operator permits', () => {
    const policy = new ServerPolicy();
    expect(() => policy.checkUserRuleAdd(alice, 'alice', 'Bash', 'deny', [])).not.toThrow();
    expect(() => policy.checkUserRuleAdd(alice, 'alice', 'Bash', 'allow', [])).toThrow(/only admins/);
    expect(() => policy.checkUserRuleAdd(admin, 'alice', 'Bash', 'allow', [deny('carol')])).not.toThrow();
  });
});
