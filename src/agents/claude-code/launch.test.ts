import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { claudeCodeLaunch } from './launch.js';

const valueOf = (args: string[], flag: string) => args[args.indexOf(flag) + 1];

describe("Claude Code's command line", () => {
  test('an untrusted folder: user settings only, every hook but Sage\'s off, bypass disabled, no MCP server but none', () => {
    const { args } = claudeCodeLaunch({ trusted: false, mcpServers: {}, permissionMode: 'default' });
    expect(valueOf(args, '--setting-sources')).toBe('user');
    expect(JSON.parse(valueOf(args, '--settings')!)).toEqual({ disableAllHooks: true, permissions: { disableBypassPermissionsMode: 'disable' } });
    expect(args).toContain('--strict-mcp-config');
    expect(JSON.parse(valueOf(args, '--mcp-config')!)).toEqual({ mcpServers: {} });
    expect(valueOf(args, '--permission-prompt-tool')).toBe('stdio');
    expect(valueOf(args, '--permission-mode')).toBe('default');
  });

  test('a trusted folder: the project and local settings too, and their hooks; bypass still disabled', () => {
    const { args } = claudeCodeLaunch({ trusted: true, mcpServers: {}, permissionMode: 'plan' });
    expect(valueOf(args, '--setting-sources')).toBe('user,project,local');
    expect(JSON.parse(valueOf(args, '--settings')!)).toEqual({ permissions: { disableBypassPermissionsMode: 'disable' } });
    expect(valueOf(args, '--permission-mode')).toBe('plan');
  });

  test("the run's MCP servers go in a file only this user reads, never on the command line; dispose removes it", () => {
    const launch = claudeCodeLaunch({ trusted: false, mcpServers: { tracker: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer s3cret-token' } } }, permissionMode: 'default' });
    expect(launch.args.join(' ')).not.toContain('s3cret-token');
    const file = valueOf(launch.args, '--mcp-config')!;
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ mcpServers: { tracker: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer s3cret-token' } } } });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    launch.dispose();
    expect(existsSync(path.dirname(file))).toBe(false);
  });

  test('a follow-up resumes (or forks) the session after Sage\'s flags', () => {
    const { args } = claudeCodeLaunch({ trusted: false, mcpServers: {}, permissionMode: 'default', resumeSession: 'abc', fork: true });
    expect(args.slice(-3)).toEqual(['--resume', 'abc', '--fork-session']);
  });
});
