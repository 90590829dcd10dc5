import type { RunEvent } from '../events/index.js';
import type { Tool } from '../tool/types.js';
import { parseMcpServers, type McpNotice } from './config.js';
import type { McpToolset } from './tools.js';

/** Run events after which a run's servers are stopped (a resumed run is rebuilt and starts them again). */
const ENDING = new Set<RunEvent['type']>(['run.completed', 'run.failed', 'run.cancelled', 'run.suspended']);

/**
 * The MCP servers of the runs one process drives: started when a run is built (from its RunSpec, so
 * a resumed run gets the same servers), stopped when the run ends or suspends. The run factory
 * (src/runtime/create-run.ts) asks for a run's tools and hands its events to `listener`.
 */
export class McpRunTools {
  private readonly sets = new Map<string, Promise<McpToolset>>();

  constructor(private readonly options: { report?: (runId: string, notice: McpNotice) => void } = {}) {}

  /**
   * The MCP tools of a run (none when its spec has no servers); `names`, when the spec lists its
   * tools, keeps those named or whose server (`mcp__server`) is named. A server that does not start
   * is reported and left out; invalid stored servers throw McpConfigError (the run cannot be built).
   */
  async tools(runId: string, servers: Record<string, unknown> | undefined, cwd: string, names?: readonly string[]): Promise<Tool[]> {
    if (!servers || Object.keys(servers).length === 0) return [];
    // Loaded here, not at the top: the MCP SDK (and its JSON Schema validator) costs tens of ms of a
    // CLI start, and most runs have no server. Awaited before the lookup below, so two calls for one
    // run still share one toolset.
    const { McpToolset } = await import('./tools.js');
    let set = this.sets.get(runId);
    if (!set) {
      const parsed = parseMcpServers(servers, `run ${runId}`, 'mcpServers');
      set = new McpToolset(parsed, { cwd }).start();
      this.sets.set(runId, set);
      void set.then((s) => s.notices.forEach((n) => this.options.report?.(runId, n)), () => this.sets.delete(runId));
    }
    const tools = (await set).tools;
    if (!names) return tools;
    return tools.filter((t) => names.includes(t.name) || names.some((n) => t.name.startsWith(`${n}__`) && n.startsWith('mcp__') && !n.slice(5).includes('__')));
  }

  /** Stops a run's servers when the run ends or suspends. */
  listener(runId: string): (event: RunEvent) => void {
    return (event) => {
      if (ENDING.has(event.type)) void this.close(runId);
    };
  }

  async close(runId: string): Promise<void> {
    const set = this.sets.get(runId);
    this.sets.delete(runId);
    await (await set?.catch(() => undefined))?.close();
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.sets.keys()].map((id) => this.close(id)));
  }
}
