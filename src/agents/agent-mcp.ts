import { expandServer, parseMcpServers, type McpServers } from '../mcp/config.js';

/**
 * The MCP servers Sage would start for a run (its RunSpec's `mcpServers`: the user's, the trusted
 * project's, `--mcp-config`), ready for an agent that starts them itself: checked again, `${VAR}`
 * read from Sage's environment (the agent's curated one lacks the servers' secrets, and should),
 * `timeout` dropped (the agents have their own). A stdio server's `cwd` is dropped too: the agents'
 * `.mcp.json` has no such field, so the agent starts every server in the run's folder.
 */
export function agentMcpServers(servers: Readonly<Record<string, Record<string, unknown>>> | undefined, env: NodeJS.ProcessEnv): McpServers {
  if (!servers || Object.keys(servers).length === 0) return {};
  const parsed = parseMcpServers(servers, 'the run', 'mcpServers');
  const out: McpServers = {};
  for (const [name, config] of Object.entries(parsed)) {
    const { timeout: _timeout, ...expanded } = expandServer(name, config, env) as McpServers[string] & { cwd?: string };
    void _timeout;
    if ('cwd' in expanded) delete expanded.cwd;
    out[name] = expanded;
  }
  return out;
}
