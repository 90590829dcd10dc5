import type { DurableRunner, StartOptions } from '../../durable/index.js';
import type { RunRequest, ServerGrant } from '../../runtime/create-run.js';
import type { Store } from '../../store/index.js';
import type { ChannelAdapter, ChannelCommonConfig, ChannelLogger } from '../adapter.js';

export interface HubChannel {
  adapter: ChannelAdapter;
  config: ChannelCommonConfig;
}

export interface ChannelHubOptions {
  store: Store;
  runner: DurableRunner;
  /** The host's `admit` (the one admission point: a surface's checks, then the run factory). */
  admitRun: (request: RunRequest) => Promise<StartOptions>;
  /** The server's model for chat runs (`--model`, SAGE_MODEL). */
  model: () => string;
  /** The folder a chat's runs work in: the channel's `cwd` checked against the server's roots. */
  cwd: (requested: string | undefined) => string;
  /** The server's grant each chat run is admitted with (its role, the policy's deny/ask lists now). */
  serverGrant: () => ServerGrant;
  channels: readonly HubChannel[];
  log: ChannelLogger;
  /** Overrides every channel's approval timeout (tests). */
  interactionTimeoutMs?: number;
  /** A channel's `agent`: the server's policy checks it and the host's settings give its command. */
  agentRun?: (name: string, cwd: string) => Pick<RunRequest, 'agent' | 'chain'>;
  /**
   * The server's per-user limits for a new run of `userId` (the sender's principal or mapped user):
   * rejects when they hold too many runs or waiting asks, as a web user would be refused.
   */
  assertRunCapacity?: (userId: string) => Promise<void>;
}
