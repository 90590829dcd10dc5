/**
 * `sage mcp list [--json]`: the MCP servers a run in this folder gets (user settings; the project's
 * `.mcp.json` and settings once the folder is trusted; `--mcp-config FILE`), each started to show
 * whether it answers and which tools it offers (`mcp__<server>__<tool>`, with the risk level its
 * annotations give). A file that does not validate is an error naming the file and field.
 */
import type { Command } from 'commander';
import { homedir } from 'node:os';
import path from 'node:path';
import type { McpWaitingForTrust } from '../mcp/index.js';
import { collect } from './run-flags.js';

export function registerMcpCommand(program: Command): void {
  const mcp = program.command('mcp').description('MCP servers for runs in this folder');
  mcp
    .command('list')
    .description('start each MCP server a run here would get and list its status and tools, and the project servers waiting for this folder to be trusted')
    .option('--json', 'one JSON object: servers (name, transport, status, error, tools), waitingForTrust (file, servers) and notices')
    .option('--cwd <dir>', 'the project folder (default: the current folder)')
    .option('--mcp-config <file>', 'also the servers of this file, as `sage run --mcp-config` (repeatable)', collect, [])
    .action(async (opts: { json?: boolean; cwd?: string; mcpConfig: string[] }) => {
      const { resolveMcpServers, McpToolset } = await import('../mcp/index.js');
      const cwd = path.resolve(opts.cwd ?? process.cwd());
      const { servers, notices, waitingForTrust } = resolveMcpServers({ cwd, home: process.env.SAGE_HOME || homedir(), configFiles: opts.mcpConfig });
      const set = new McpToolset(servers, { cwd, connectTimeoutMs: 15_000 });
      try {
        await set.start();
      } finally {
        await set.close();
      }
      const all = [...notices, ...set.notices];
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ servers: set.statuses, waitingForTrust, notices: all }, null, 2)}\n`);
      } else {
        if (set.statuses.length === 0 && waitingForTrust.length === 0) process.stdout.write('No MCP servers. Add them to .mcp.json, to "mcpServers" in .sage/settings.json or ~/.sage/settings.json, or pass --mcp-config FILE.\n');
        for (const s of set.statuses) {
          process.stdout.write(`${s.name}  ${s.transport}  ${s.status}${s.error ? `: ${s.error}` : ''}\n`);
          for (const t of s.tools) process.stdout.write(`    ${t.name}  ${t.risk}${t.description ? `  ${t.description.split('\n')[0]}` : ''}\n`);
        }
        if (waitingForTrust.length > 0) process.stdout.write(waitingText(waitingForTrust));
        // The waiting servers are on stdout already; their notices would say it twice.
        for (const n of all) if (!waitingForTrust.some((w) => w.file === n.file)) process.stderr.write(`sage: ${n.file}: ${n.message}\n`);
      }
      if (set.statuses.some((s) => s.status === 'failed')) process.exitCode = 1;
    });
}

/** The project's servers that wait for the folder to be trusted, and the two ways to start them. */
function waitingText(waiting: readonly McpWaitingForTrust[]): string {
  const lines = ['Not started, because this folder is not trusted:'];
  for (const w of waiting) lines.push(`  ${w.servers.join(', ')}  (${w.file})`);
  lines.push('To start them, trust this folder: sage trust (remembered; or start `sage` here and answer yes when it asks),');
  lines.push('or name the file for one command: sage mcp list --mcp-config FILE (also for sage run).');
  return `${lines.join('\n')}\n`;
}
