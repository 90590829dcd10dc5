import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { trustedFoldersFile, trustFolder } from '../permission/index.js';
import { offerFolderTrust } from './folder-trust.js';
import { parseRunFlags } from './run-flags.js';
import { ignoredUntilTrusted } from './untrusted-folder.js';

let base: string;
let project: string;
let home: string;
const put = (rel: string, text: string) => {
  const file = path.join(project, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
};

beforeEach(() => {
  base = realpathSync(mkdtempSync(path.join(tmpdir(), 'sage-offer-trust-')));
  project = path.join(base, 'project');
  home = path.join(base, 'home');
  mkdirSync(project, { recursive: true });
  vi.stubEnv('SAGE_HOME', home);
});
afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  rmSync(base, { recursive: true, force: true });
});

describe('what an untrusted folder ignores', () => {
  it('names allow rules, hooks, MCP servers, agents, skills and gated settings', () => {
    put('.sage/settings.json', JSON.stringify({ permissions: { allow: ['Bash(ls)', 'Read(**)'], deny: ['Read(.env)'], defaultMode: 'acceptEdits' }, hooks: { PreToolUse: [] }, model: 'openai:x' }));
    put('.mcp.json', JSON.stringify({ mcpServers: { github: { command: 'gh-mcp' } } }));
    put('.claude/agents/reviewer.md', '---\nname: reviewer\n---\n');
    put('.sage/skills/deploy/SKILL.md', '---\nname: deploy\n---\n');
    expect(ignoredUntilTrusted(project)).toEqual(['2 allow rules', 'hooks (PreToolUse)', 'MCP servers (github)', '1 agent', '1 skill', 'settings defaultMode, model']);
  });

  it('is nothing for a folder whose settings only deny and ask (trusting it would change nothing)', () => {
    put('.sage/settings.json', JSON.stringify({ permissions: { deny: ['Read(.env)'], ask: ['Bash(git push *)'] } }));
    expect(ignoredUntilTrusted(project)).toEqual([]);
  });
});

describe('offerFolderTrust without a person', () => {
  it('asks nothing, trusts nothing, and prints one line naming what is ignored and the command', async () => {
    put('.sage/skills/deploy/SKILL.md', '---\nname: deploy\n---\n');
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    await offerFolderTrust(parseRunFlags({ batch: true }), project);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`${project}: ignoring its 1 skill`);
    expect(lines[0]).toContain(`Trust it with: sage trust ${project}`);
    expect(existsSync(trustedFoldersFile(home))).toBe(false);
  });

  it('says nothing in a trusted folder, or one with nothing that waits for trust', async () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    await offerFolderTrust(parseRunFlags({ batch: true }), project);
    put('.mcp.json', JSON.stringify({ mcpServers: { github: { command: 'gh-mcp' } } }));
    trustFolder(home, project);
    await offerFolderTrust(parseRunFlags({ batch: true }), project);
    expect(write).not.toHaveBeenCalled();
  });
});
