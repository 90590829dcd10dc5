import path from 'node:path';
import type { McpServers } from '../../mcp/config.js';
import { writePrivateFile } from '../private-file.js';

export interface AcpLaunchOptions {
  /** The preset: `gemini` and `qwen` are configured; any other ACP agent is started as given. */
  preset: string;
  cwd: string;
  trusted: boolean;
  mcpServers: McpServers;
}

/**
 * Gemini CLI's settings from Sage, read as its "system" settings (GEMINI_CLI_SYSTEM_SETTINGS_PATH,
 * merged above user and workspace settings, gemini-cli 0.61.0): YOLO and "always allow" off, no
 * allowlist (`tools.allowed` replaces), only Sage's MCP servers (`mcp.allowed` lists their names;
 * an empty list allows none), and until trust no hooks.
 */
export function geminiSystemSettings(trusted: boolean, mcpServers: McpServers): Record<string, unknown> {
  return {
    security: { disableYoloMode: true, disableAlwaysAllow: true },
    tools: { allowed: [] },
    mcpServers,
    mcp: { allowed: Object.keys(mcpServers) },
    ...(trusted ? {} : { hooksConfig: { enabled: false } }),
  };
}

/**
 * Qwen Code's settings from Sage (QWEN_CODE_SYSTEM_SETTINGS_PATH, qwen-code 0.15.10): its folder
 * trust on (off by default, which trusts every folder) so the trusted-folders file Sage writes
 * decides whether `.qwen/settings.json` is read, approval mode default, Sage's MCP servers, and
 * until trust no hooks.
 */
export function qwenSystemSettings(trusted: boolean, mcpServers: McpServers): Record<string, unknown> {
  return {
    security: { folderTrust: { enabled: true } },
    tools: { approvalMode: 'default' },
    mcpServers,
    mcp: { allowed: Object.keys(mcpServers) },
    ...(trusted ? {} : { disableAllHooks: true }),
  };
}

/**
 * What Sage adds to an ACP agent's start: arguments after the command and variables naming files
 * Sage wrote (private: the MCP servers' `env` and `headers` may hold secrets). The agent's own
 * trust decision is replaced by Sage's: `GEMINI_CLI_TRUST_WORKSPACE`, or Qwen's trusted-folders
 * file holding the run's folder alone. `dispose` removes the files once the agent has exited.
 */
export function acpLaunch(options: AcpLaunchOptions): { args: string[]; env: Record<string, string>; dispose: () => void } {
  if (options.preset === 'gemini') {
    const settings = writePrivateFile('settings.json', JSON.stringify(geminiSystemSettings(options.trusted, options.mcpServers)));
    return {
      args: ['--approval-mode', 'default'],
      env: { GEMINI_CLI_SYSTEM_SETTINGS_PATH: settings.path, GEMINI_CLI_TRUST_WORKSPACE: options.trusted ? 'true' : 'false' },
      dispose: settings.dispose,
    };
  }
  if (options.preset === 'qwen') {
    const settings = writePrivateFile('settings.json', JSON.stringify(qwenSystemSettings(options.trusted, options.mcpServers)));
    const folders = writePrivateFile('trustedFolders.json', JSON.stringify({ [path.resolve(options.cwd)]: options.trusted ? 'TRUST_FOLDER' : 'DO_NOT_TRUST' }));
    return {
      args: ['--approval-mode', 'default'],
      env: { QWEN_CODE_SYSTEM_SETTINGS_PATH: settings.path, QWEN_CODE_TRUSTED_FOLDERS_PATH: folders.path },
      dispose: () => (settings.dispose(), folders.dispose()),
    };
  }
  return { args: [], env: {}, dispose: () => {} };
}
