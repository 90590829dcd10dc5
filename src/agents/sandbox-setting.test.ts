import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { parseRunFlags } from '../cli/run-flags.js';
import { trustFolder } from '../permission/index.js';
import { resolveAgentRun } from './resolve-agent.js';

let dir: string;
let home: string;
let project: string;

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-sandbox-setting-')));
  home = join(dir, 'home');
  project = join(dir, 'project');
  mkdirSync(join(home, '.sage'), { recursive: true });
  mkdirSync(join(project, '.sage'), { recursive: true });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('the agent sandbox setting', () => {
  test('on unless something says off: the user settings may, the flag wins over them', () => {
    expect(resolveAgentRun({ name: 'gemini', cwd: project, home }).agent.sandbox).toBeUndefined();
    writeFileSync(join(home, '.sage', 'settings.json'), JSON.stringify({ agents: { gemini: { sandbox: 'off' } } }));
    expect(resolveAgentRun({ name: 'gemini', cwd: project, home }).agent.sandbox).toBe('off');
    expect(resolveAgentRun({ name: 'gemini', cwd: project, home, sandbox: 'on' }).agent.sandbox).toBeUndefined();
  });

  test("a project's shared settings cannot turn it off, even once the folder is trusted", () => {
    writeFileSync(join(project, '.sage', 'settings.json'), JSON.stringify({ agents: { gemini: { sandbox: 'off' } } }));
    trustFolder(home, project);
    expect(() => resolveAgentRun({ name: 'gemini', cwd: project, home })).toThrow(/cannot turn the agent's sandbox off/);
  });

  test('a value other than on or off is refused, naming the file and the field', () => {
    writeFileSync(join(home, '.sage', 'settings.json'), JSON.stringify({ agents: { gemini: { sandbox: false } } }));
    expect(() => resolveAgentRun({ name: 'gemini', cwd: project, home })).toThrow(/agents\.gemini.*sandbox must be "on" or "off"/);
  });

  test('--sandbox takes on or off, and only with an agent', () => {
    expect(parseRunFlags({ agent: 'gemini', sandbox: 'off' }).sandbox).toBe('off');
    expect(() => parseRunFlags({ agent: 'gemini', sandbox: 'maybe' })).toThrow('--sandbox must be on or off');
    expect(() => parseRunFlags({ sandbox: 'off' })).toThrow('--sandbox needs --agent');
  });
});
