import type { McpServers } from '../../mcp/config.js';
import { writePrivateFile } from '../private-file.js';

/** What decides Claude Code's command line besides the protocol: the folder's trust, the run's MCP servers, the mode, the session. */
export interface ClaudeCodeLaunchOptions {
  /** Whether Sage trusts the run's folder: only then does Claude Code read the project's `.claude/settings*.json`. */
  trusted: boolean;
  /** The servers Sage would start for the run (agent-mcp.ts): the only ones Claude Code starts. */
  mcpServers: McpServers;
  /** Claude Code's permission mode (`default` or `plan`). */
  permissionMode: string;
  resumeSession?: string;
  fork?: boolean;
}

/**
 * Settings Sage passes with `--settings` (Claude Code's "flag settings", above user, project and
 * local settings): bypass mode cannot be switched on — not by `--dangerously-skip-permissions`, a
 * settings file's `defaultMode`, or a mode change — and, until the folder is trusted, no hook runs
 * but Sage's own gate (registered over `initialize`, which `disableAllHooks` leaves alone: checked
 * against the real CLI), so the user's hooks do not run in a repository nobody vouched for either.
 */
export function sageClaudeSettings(trusted: boolean): Record<string, unknown> {
  return { permissions: { disableBypassPermissionsMode: 'disable' }, ...(trusted ? {} : { disableAllHooks: true }) };
}

/**
 * Claude Code's arguments after the operator's command: the stream-json control protocol, Sage's
 * prompt tool and mode, which settings files it reads (`user` alone until Sage trusts the folder;
 * then `user,project,local`), Sage's flag settings, and `--strict-mcp-config` with the run's servers
 * (none from `.mcp.json`, `~/.claude.json` or plugins). The servers go in a private file, not the
 * command line, since their `env` and `headers` may hold secrets; `dispose` removes it.
 */
export function claudeCodeLaunch(options: ClaudeCodeLaunchOptions): { args: string[]; dispose: () => void } {
  const names = Object.keys(options.mcpServers);
  const config = names.length ? writePrivateFile('mcp.json', JSON.stringify({ mcpServers: options.mcpServers })) : undefined;
  const args = [
    '-p',
    '--output-format', 'stream-json',
    '--input-format', 'stream-json',
    '--verbose',
    '--permission-prompt-tool', 'stdio',
    '--permission-mode', options.permissionMode,
    '--setting-sources', options.trusted ? 'user,project,local' : 'user',
    '--settings', JSON.stringify(sageClaudeSettings(options.trusted)),
    '--strict-mcp-config',
    '--mcp-config', config ? config.path : JSON.stringify({ mcpServers: {} }),
    ...(options.resumeSession ? ['--resume', options.resumeSession, ...(options.fork ? ['--fork-session'] : [])] : []),
  ];
  return { args, dispose: () => config?.dispose() };
}
