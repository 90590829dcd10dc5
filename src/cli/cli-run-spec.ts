import { homedir } from 'node:os';
import { resolveMcpServers } from '../mcp/config.js';
import type { RunRequest } from '../runtime/create-run.js';
import type { RunRule } from '../runtime/run-spec.js';
import type { RunFlags } from './run-flags.js';

/**
 * The MCP servers of a new CLI run (src/mcp: user settings; the project's `.mcp.json` and settings
 * once the folder is trusted; `--mcp-config`). A bad file throws McpConfigError naming file and field.
 */
function cliMcpServers(flags: RunFlags, cwd: string): Pick<RunRequest, 'mcpServers'> {
  const { servers, notices } = resolveMcpServers({ cwd, home: process.env.SAGE_HOME || homedir(), configFiles: flags.mcpConfig ?? [] });
  for (const notice of notices) process.stderr.write(`sage: ${notice.file}: ${notice.message}\n`);
  return Object.keys(servers).length ? { mcpServers: servers } : {};
}

/** The run's own rules, as typed on the command line. */
export function cliRules(flags: RunFlags): RunRule[] {
  return [
    ...flags.deny.map((rule) => ({ behavior: 'deny' as const, rule, source: 'cli' })),
    ...flags.ask.map((rule) => ({ behavior: 'ask' as const, rule, source: 'cli' })),
    ...flags.allow.map((rule) => ({ behavior: 'allow' as const, rule, source: 'cli' })),
  ];
}

/** What the run flags say about a new run's RunRequest (the task, surface and model are the caller's). */
export function cliRunSpec(flags: RunFlags, cwd: string): Omit<RunRequest, 'task' | 'surface' | 'model'> {
  return {
    cwd,
    ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}),
    mode: flags.batch ? 'batch' : flags.nonInteractive ? 'non-interactive' : 'interactive',
    // Without --auto, the surface's default answer (src/runtime/surfaces.ts: deny).
    ...(flags.auto ? { autoResponse: flags.auto } : {}),
    ...(flags.permissionMode ? { permissionMode: flags.permissionMode } : {}),
    rules: cliRules(flags),
    ...(flags.ignoreBrokenSettings ? { ignoreBrokenSettings: true } : {}),
    ...(flags.maxSteps ? { maxSteps: flags.maxSteps } : {}),
    ...(flags.interactionTimeout ? { interactionTimeoutMs: flags.interactionTimeout * 1000 } : {}),
    ...cliMcpServers(flags, cwd),
  };
}
