import type { DurableRunner, StartOptions } from '../durable/index.js';
import type { RunFactory, RunRequest } from './create-run.js';
import type { RunPolicy } from './run-policy.js';
import type { ServerPolicy } from './server-policy.js';

/**
 * What a surface hosted by `sage serve` (the chat channels) starts its runs with: the server's
 * runner, run factory, policies and home. The server's `DurableRunDriver` is one; a channel needs
 * nothing else of the server, so it depends on this and not on src/server.
 */
export interface RunHost {
  readonly runner: DurableRunner;
  /** The run factory. */
  readonly factory: RunFactory;
  /** The operator's policy: which agents may run, what a new run's gate stores. */
  readonly serverPolicy: ServerPolicy;
  /** Which models and working directories a run may have. */
  readonly runPolicy: RunPolicy;
  /** `~` of the host settings the server reads (agents, MCP servers, rules). */
  readonly home: string;
  /** The MCP servers the host configured for runs in `cwd`; refuses when that configuration does not load. */
  /** Admits a run: its surface's checks before start, the host's MCP servers, then the factory's admitRun. */
  admit(request: RunRequest): Promise<StartOptions>;
  hostMcpServers(cwd: string): Promise<Pick<RunRequest, 'mcpServers'>>;
}
