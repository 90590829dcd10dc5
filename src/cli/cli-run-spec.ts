import { homedir } from 'node:os';
import { resolveMcpServers } from '../mcp/config.js';
import type { NewRun } from '../runtime/create-run.js';
import type { RunFlags } from './run-flags.js';

/**
 * The MCP servers of a new CLI run (src/mcp: user settings; the project's `.mcp.json` and settings
 * once the folder is trusted; `--mcp-config`). A bad file throws McpConfigError naming file and field.
 */
function cliMcpServers(flags: RunFlags, cwd: string): Pick<NewRun, 'mcpServers'> {
  const { servers, notices } = resolveMcpServers({ cwd, home: process.env.SAGE_HOME || homedir(), configFiles: flags.mcpConfig ?? [] });
  for (const notice of notices) process.stderr.write(`sage: ${notice.file}: ${notice.message}\n`);
  return Object.keys(servers).length ? { mcpServers: servers } : {};
}

/** What the run flags say about a new run's RunSpec (the surface and model are the caller's). */
export function cliRunSpec(flags: RunFlags, cwd: string): Omit<NewRun, 'surface' | 'model'> {
  return {
    cwd,
    ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}),
    mode: flags.batch ? 'batch' : flags.nonInteractive ? 'non-interactive' : 'interactive',
    ...(flags.nonInteractive ? { autoResponse: flags.auto ?? 'deny' } : {}),
    ...(flags.permissionMode ? { permissionMode: flags.permissionMode } : {}),
    rules: [
      ...flags.deny.map((rule) => ({ behavior: 'deny' as const, rule, source: 'cli' })),
      ...flags.ask.map((rule) => ({ behavior: 'ask' as const, rule, source: 'cli' })),
      ...flags.allow.map((rule) => ({ behavior: 'allow' as const, rule, source: 'cli' })),
    ],
    ...(flags.ignoreBrokenSettings ? { ignoreBrokenSettings: true } : {}),
    ...(flags.maxSteps ? { maxSteps: flags.maxSteps } : {}),
    ...(flags.interactionTimeout ? { interactionTimeoutMs: flags.interactionTimeout * 1000 } : {}),
    ...cliMcpServers(flags, cwd),
  };
}
