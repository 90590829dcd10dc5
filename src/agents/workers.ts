import type { RunWorker } from '../loop/worker.js';
import type { McpServers } from '../mcp/config.js';
import type { Model } from '../model/types.js';
import { agentMcpServers } from './agent-mcp.js';
import { chainWorker, type ChainSpec } from './chain.js';
import { acpWorker } from './acp/worker.js';
import { claudeCodeWorker } from './claude-code/worker.js';
import { codexWorker } from './codex/worker.js';
import { curatedEnvironment } from './environment.js';
import { UnknownAgentError } from './errors.js';
import { refuseOwnedFlags } from './owned-flags.js';
import { agentPreset, type AgentProtocol } from './presets.js';

/** A run's external agent as its RunSpec keeps it (src/durable/stored-options.ts `agent`). */
export interface AgentRunSpec {
  name: string;
  command: string[];
  env?: Record<string, string>;
  passEnv?: string[];
  resumeSession?: string;
  fork?: boolean;
}

/** What a protocol's worker is built from: the command, the curated environment, the session to continue. */
export interface AgentWorkerOptions {
  name: string;
  command: readonly string[];
  env: Record<string, string>;
  resumeSession?: string;
  fork?: boolean;
  /** The session's folders besides its cwd (an ACP agent's file requests must stay inside them). */
  additionalDirectories?: readonly string[];
  /** Whether Sage trusts the run's folder: an agent reads its project's own settings only then. */
  trusted?: boolean;
  /** The MCP servers Sage would start for the run, expanded (agent-mcp.ts): the only ones the agent gets. */
  mcpServers?: McpServers;
}

/** What a run adds to its agent's spec: the folders, Sage's trust in its cwd, the MCP servers Sage would start. */
export interface AgentRunContext {
  additionalDirectories?: readonly string[];
  trusted: boolean;
  /** The RunSpec's `mcpServers` (unexpanded). */
  mcpServers?: Readonly<Record<string, Record<string, unknown>>>;
}

/** One worker per protocol: how Sage speaks to the agent's process. */
const PROTOCOL_WORKERS: Partial<Record<AgentProtocol, (options: AgentWorkerOptions) => RunWorker>> = {
  'claude-code': (options) => claudeCodeWorker(options),
  acp: (options) => acpWorker(options),
  codex: (options) => codexWorker(options),
};

/** The protocols this build can drive (the presets of the others are refused before a run is stored). */
export function supportsProtocol(protocol: AgentProtocol): boolean {
  return PROTOCOL_WORKERS[protocol] !== undefined;
}

/**
 * The worker of a run with an external agent: its protocol's worker with the curated environment
 * (Sage's basics and the agent's own variables, the run's extra ones, and the names it passes
 * through from the environment of the process that drives it).
 */
export function agentWorker(spec: AgentRunSpec, run: AgentRunContext, parentEnv: NodeJS.ProcessEnv = process.env): RunWorker {
  const preset = agentPreset(spec.name);
  const build = PROTOCOL_WORKERS[preset.protocol];
  if (!build) throw new UnknownAgentError(`The ${spec.name} agent speaks ${preset.protocol}, which this build of Sage cannot drive.`);
  // A stored command is checked again: it may predate the rule, or come from an edited store.
  refuseOwnedFlags(preset, spec.command);
  const passed: Record<string, string> = {};
  for (const name of spec.passEnv ?? []) if (parentEnv[name] !== undefined) passed[name] = parentEnv[name]!;
  const env = curatedEnvironment(parentEnv, preset.envPrefixes, { ...passed, ...(spec.env ?? {}) });
  return build({
    name: spec.name,
    command: spec.command,
    env,
    additionalDirectories: run.additionalDirectories ?? [],
    trusted: run.trusted,
    mcpServers: agentMcpServers(run.mcpServers, parentEnv),
    ...(spec.resumeSession ? { resumeSession: spec.resumeSession } : {}),
    ...(spec.fork ? { fork: true } : {}),
  });
}

/** The worker of a run whose RunSpec names an agent or a chain; none for Sage's plain loop. */
export function runWorkerOf(
  spec: { agent?: AgentRunSpec; chain?: ChainSpec; additionalDirectories?: readonly string[]; mcpServers?: Readonly<Record<string, Record<string, unknown>>> },
  trusted: boolean,
  parentEnv: NodeJS.ProcessEnv = process.env,
): RunWorker | undefined {
  const agent = spec.agent ? agentWorker(spec.agent, { trusted, ...(spec.additionalDirectories ? { additionalDirectories: spec.additionalDirectories } : {}), ...(spec.mcpServers ? { mcpServers: spec.mcpServers } : {}) }, parentEnv) : undefined;
  if (spec.chain && (spec.chain.setup || spec.chain.cleanup)) return chainWorker(spec.chain, agent);
  return agent;
}

/**
 * The model slot of an agent run: the agent brings its own model, so the loop never calls this one.
 * Its id names the agent in `run.started` and the run list.
 */
export function agentModel(name: string): Model {
  return {
    specificationVersion: 'sage.model.v1',
    id: `agent:${name}`,
    stream() {
      throw new UnknownAgentError(`The ${name} agent brings its own model; Sage's loop does not call one for it.`);
    },
  };
}
