import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BrokenSettingsError, checkSettings, describeFileProblem, lineAndColumn } from './settings-check.js';

const noRules = { allow: [], ask: [], deny: [], ignoreBrokenSettings: false };

describe('checkSettings (the CLI fails closed)', () => {
  let home: string;
  let project: string;
  let savedHome: string | undefined;
  let stderr: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'sage-check-home-'));
    project = mkdtempSync(join(tmpdir(), 'sage-check-project-'));
    mkdirSync(join(home, '.sage'));
    savedHome = process.env.SAGE_HOME;
    process.env.SAGE_HOME = home;
    stderr = '';
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stderr += String(chunk);
      return true;
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
    if (savedHome === undefined) delete process.env.SAGE_HOME;
    else process.env.SAGE_HOME = savedHome;
    rmSync(home, { recursive: true, force: true });
    rmSync(project, { recursive: true, force: true });
  });

  const userFile = () => join(home, '.sage', 'settings.json');

  it('refuses a user settings file with a trailing comma, naming the file, line, column and field', async () => {
    writeFileSync(userFile(), '{\n  "permissions": {\n    "deny": ["Bash(rm *)"],\n  }\n}\n');
    const error = await checkSettings(noRules, project, { report: true }).catch((e: unknown) => e);
    expect(BrokenSettingsError.isInstance(error)).toBe(true);
    expect((error as BrokenSettingsError).code).toBe('settings_invalid');
    const message = (error as Error).message;
    expect(message).toContain(`${userFile()}, line 4, column 3, field (root): not valid JSON`);
    expect(message).toContain('--ignore-broken-settings');
    expect(stderr).toBe('');
  });

  it('refuses a file whose rule can never match, and one with a schema error, pointing at their lines', async () => {
    writeFileSync(userFile(), '{\n  "permissions": {\n    "deny": [\n      "Read(.env)",\n      "Bash(echo *"\n    ],\n    "defaultMode": "yolo"\n  }\n}\n');
    const message = ((await checkSettings(noRules, project, { report: true }).catch((e: unknown) => e)) as Error).message;
    expect(message).toContain(`${userFile()}, line 5, field permissions.deny[1]: Invalid permission rule "Bash(echo *"`);
    expect(message).toContain(`${userFile()}, line 7, field permissions.defaultMode:`);
  });

  it('refuses a broken project file too, trusted or not (its deny rules apply either way)', async () => {
    mkdirSync(join(project, '.sage'));
    writeFileSync(join(project, '.sage', 'settings.json'), '{"permissions": {"deny": ["Bash(curl *"]}}');
    await expect(checkSettings(noRules, project, { report: true })).rejects.toThrow(/settings\.json, line 1, field permissions\.deny\[0\]/);
  });

  it('refuses a broken command-line rule even with --ignore-broken-settings, naming the flag', async () => {
    await expect(checkSettings({ ...noRules, deny: ['Read(.env)', 'Bash(echo *'], ignoreBrokenSettings: true }, project, { report: true })).rejects.toThrow(
      /--deny "Bash\(echo \*": Invalid permission rule[\s\S]*The run did not start: fix the rule/,
    );
  });

  it('with --ignore-broken-settings goes on and says what is NOT applied', async () => {
    writeFileSync(userFile(), '{"permissions": {"deny": ["Bash(rm *)"],}}');
    await checkSettings({ ...noRules, ignoreBrokenSettings: true }, project, { report: true });
    expect(stderr).toMatch(/settings skipped: .*settings\.json, line 1, column 41, field \(root\): not valid JSON .* none of its rules are applied \(--ignore-broken-settings\)/);
  });

  it('lets warnings through (an unknown tool name): the gate prints them', async () => {
    writeFileSync(userFile(), JSON.stringify({ permissions: { deny: ['Frobnicate'] } }));
    await checkSettings(noRules, project, { report: true });
    expect(stderr).toBe('');
  });
});

describe('locating a problem in its file', () => {
  it('turns an offset into a 1-based line and column', () => {
    expect(lineAndColumn('ab\ncd\n', 0)).toEqual({ line: 1, column: 1 });
    expect(lineAndColumn('ab\ncd\n', 4)).toEqual({ line: 2, column: 2 });
    expect(lineAndColumn('ab', 99)).toEqual({ line: 1, column: 3 });
  });

  it('names the file and field alone when the file cannot be read', () => {
    expect(describeFileProblem({ file: '/nonexistent/settings.json', key: '(root)', problem: 'the file does not exist', severity: 'error' })).toBe(
      '/nonexistent/settings.json, field (root): the file does not exist',
    );
  });
});
