import type { AgentRunSpec } from '../agents/workers.js';
import type { ChainSpec } from '../agents/chain.js';
import type { Role } from './principal.js';
import type { RunRule, RunSpec, RunSurface } from './run-spec.js';

/**
 * What a server-gated run (web, chat) keeps of the server that admitted it: the requester's role
 * (the current policy decides again on every resume what that role may keep) and the server
 * policy's deny and ask rules when it started, which keep applying wherever the run is resumed.
 */
export interface ServerGrant {
  role: Role;
  deny: string[];
  ask: string[];
}

/**
 * A new run as a surface asks for it: the one input of `admitRun` (src/runtime/create-run.ts).
 * Each surface (the CLI, the server, a chat channel, the Task tool, the agent runner) only
 * translates what it was given into this; what differs per surface is in SURFACES.
 */
export interface RunRequest {
  task: string;
  surface: RunSurface;
  /** Who starts the run: a server user, a chat principal (`telegram:42`), the parent's; default the OS user. */
  principal?: string;
  model: string;
  baseUrl?: string;
  cwd: string;
  /**
   * The outermost folder whose settings apply (the server bounds it by its root; a subagent keeps
   * its parent's); default the nearest folder with `.git` above cwd, else cwd.
   */
  projectRoot?: string;
  additionalDirectories?: string[];
  mode?: 'interactive' | 'non-interactive' | 'batch';
  /** A non-interactive run's answers; default the surface's (SURFACES: never allow unasked). */
  autoResponse?: 'allow' | 'deny' | 'default';
  permissionMode?: RunSpec['permissionMode'];
  /** The run's own rules, each with its source (`cli` flags, a web client's `request`, the `parent run`'s). */
  rules?: RunRule[];
  /** A server-gated run: the role and the server policy's lists it was admitted with. */
  server?: ServerGrant;
  ignoreBrokenSettings?: boolean;
  tools?: string[];
  oneTask?: boolean;
  maxSteps?: number;
  interactionTimeoutMs?: number;
  executionTimeoutMs?: number;
  parentRunId?: string;
  /** A chat run (surface `chat`): the adapter and chat its replies and asks go to. */
  chat?: { channel: string; chatId: string; threadId?: string };
  /** Anything the caller wants back (labels, the web client's thread id, a subagent's origin). */
  metadata?: Record<string, unknown>;
  /** An external coding agent does the work (`sage run --agent`, `agent` in POST /runs); src/agents. */
  agent?: AgentRunSpec;
  /** The action chain around the work: setup and cleanup scripts. */
  chain?: ChainSpec;
  /** The opening of the system prompt instead of Sage's (a subagent's role). */
  intro?: string;
  /** MCP servers by name (`.mcp.json` shape; src/mcp resolves them): their tools are `mcp__<server>__<tool>`. */
  mcpServers?: Record<string, Record<string, unknown>>;
}
