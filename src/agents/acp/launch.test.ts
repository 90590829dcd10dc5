import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { acpLaunch } from './launch.js';

const servers = { files: { command: 'files-mcp', env: { TOKEN: 'tok-123' } } };

describe("an ACP agent's start: Sage's trust and approval settings replace the agent's own", () => {
  test('Gemini CLI in an untrusted folder: workspace untrusted, approval mode default, YOLO and allowlists off, hooks off, only Sage\'s servers', () => {
    const launch = acpLaunch({ preset: 'gemini', cwd: '/work/repo', trusted: false, mcpServers: servers });
    expect(launch.args).toEqual(['--approval-mode', 'default']);
    expect(launch.env.GEMINI_CLI_TRUST_WORKSPACE).toBe('false');
    const file = launch.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH!;
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      security: { disableYoloMode: true, disableAlwaysAllow: true },
      tools: { allowed: [] },
      mcpServers: servers,
      mcp: { allowed: ['files'] },
      hooksConfig: { enabled: false },
    });
    // Gemini skips a system settings file in a folder others may write (as /tmp): this one is private.
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(launch.args.join(' ')).not.toContain('tok-123');
    launch.dispose();
    expect(existsSync(file)).toBe(false);
  });

  test('Gemini CLI in a trusted folder: the workspace is trusted and its hooks may run; still no YOLO and no servers but Sage\'s', () => {
    const launch = acpLaunch({ preset: 'gemini', cwd: '/work/repo', trusted: true, mcpServers: {} });
    expect(launch.env.GEMINI_CLI_TRUST_WORKSPACE).toBe('true');
    const settings = JSON.parse(readFileSync(launch.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH!, 'utf8'));
    expect(settings.hooksConfig).toBeUndefined();
    expect(settings.security.disableYoloMode).toBe(true);
    expect(settings.mcp).toEqual({ allowed: [] });
    launch.dispose();
  });

  test("Qwen Code: its folder trust on, a trusted-folders file naming only the run's folder with Sage's answer, approval mode default", () => {
    const untrusted = acpLaunch({ preset: 'qwen', cwd: '/work/repo/', trusted: false, mcpServers: servers });
    expect(untrusted.args).toEqual(['--approval-mode', 'default']);
    expect(JSON.parse(readFileSync(untrusted.env.QWEN_CODE_TRUSTED_FOLDERS_PATH!, 'utf8'))).toEqual({ '/work/repo': 'DO_NOT_TRUST' });
    expect(JSON.parse(readFileSync(untrusted.env.QWEN_CODE_SYSTEM_SETTINGS_PATH!, 'utf8'))).toEqual({
      security: { folderTrust: { enabled: true } },
      tools: { approvalMode: 'default' },
      mcpServers: servers,
      mcp: { allowed: ['files'] },
      disableAllHooks: true,
    });
    untrusted.dispose();
    expect(existsSync(untrusted.env.QWEN_CODE_TRUSTED_FOLDERS_PATH!)).toBe(false);
    const trusted = acpLaunch({ preset: 'qwen', cwd: '/work/repo', trusted: true, mcpServers: {} });
    expect(JSON.parse(readFileSync(trusted.env.QWEN_CODE_TRUSTED_FOLDERS_PATH!, 'utf8'))).toEqual({ '/work/repo': 'TRUST_FOLDER' });
    trusted.dispose();
  });

  test('any other ACP agent is started as given', () => {
    expect(acpLaunch({ preset: 'acp', cwd: '/work/repo', trusted: false, mcpServers: servers })).toMatchObject({ args: [], env: {} });
  });
});
