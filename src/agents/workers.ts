import { join } from 'node:path';
import type { RunWorker, WorkerContext } from '../loop/worker.js';
import type { McpServers } from '../mcp/config.js';
import type { Model } from '../model/types.js';
import type { Overlay } from '../sandbox/index.js';
import { agentMcpServers } from './agent-mcp.js';
import { agentFilesRoot } from './private-file.js';
import { chainWorker, type ChainSpec } from './chain.js';
import { acpWorker } from './acp/worker.js';
import { claudeCodeWorker } from './claude-code/worker.js';
import { codexConfinement } from './codex/launch.js';
import { codexWorker } from './codex/worker.js';
import { curatedEnvironment } from './environment.js';
import { UnknownAgentError } from './errors.js';
import { refuseOwnedFlags } from './owned-flags.js';
import { agentPreset, type AgentProtocol } from './presets.js';
import { confine } from '../sandbox/confine.js';

/** A run's external agent as its RunSpec keeps it (src/durable/stored-options.ts `agent`). */
export interface AgentRunSpec {
  name: string;
  command: string[];
  env?: Record<string, string>;
  passEnv?: string[];
  resumeSession?: string;
  fork?: boolean;
  /** The agent's OS sandbox: on unless `off`. */
  sandbox?: 'on' | 'off';
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
  /** Whether the agent runs inside Sage's OS sandbox (src/sandbox); unknown when not said. */
  sandboxed?: boolean;
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
  const options: AgentWorkerOptions = {
    name: spec.name,
    command: spec.command,
    env,
    additionalDirectories: run.additionalDirectories ?? [],
    trusted: run.trusted,
    mcpServers: agentMcpServers(run.mcpServers, parentEnv),
    ...(spec.resumeSession ? { resumeSession: spec.resumeSession } : {}),
    ...(spec.fork ? { fork: true } : {}),
  };
  return async (ctx) => {
    // A resumed run's agent is gone: its worker says so (agent_interrupted) without starting anything.
    if (ctx.resumed) return build(options)(ctx);
    // Codex reads its config from its own writable home: inside the sandbox that config is Sage's, read-only.
    const own = preset.protocol === 'codex' && spec.sandbox !== 'off' ? codexConfinement(options.env) : undefined;
    try {
      const started = await startingCommand(ctx, options, spec.sandbox ?? 'on', preset.stateInHome, own?.overlays);
      return await build({ ...options, ...started })(ctx);
    } finally {
      own?.dispose();
    }
  };
}

/** The warning of an agent run with its sandbox off (an `agent.sandbox` event, and the terminal's). */
export const UNSANDBOXED_WARNING =
  'The agent runs unconfined (--sandbox off): what it reads, writes and runs with its own tools, without asking Sage, is not limited to the run\'s folders, and Read deny rules do not hide files from it.';

/**
 * The command and environment the agent is started with: inside its OS sandbox (src/sandbox) unless
 * the run turned it off, with the paths of the run's Read deny rules masked. Said in an
 * `agent.sandbox` event either way; the network is not confined (the agent needs its model's API).
 */
async function startingCommand(
  ctx: WorkerContext,
  options: AgentWorkerOptions,
  sandbox: 'on' | 'off',
  stateInHome: readonly string[],
  overlays: readonly Overlay[] = [],
): Promise<Pick<AgentWorkerOptions, 'command' | 'env' | 'sandboxed'>> {
  if (sandbox === 'off') {
    ctx.emit('agent.sandbox', { agentName: options.name, sandbox: 'off', masked: [], incomplete: [], warning: UNSANDBOXED_WARNING });
    return { command: options.command, env: options.env, sandboxed: false };
  }
  const confined = await confine({
    command: options.command,
    cwd: ctx.cwd,
    additionalDirectories: options.additionalDirectories ?? [],
    env: options.env,
    stateInHome,
    denied: ctx.readDenyPaths(),
    hide: options.trusted === true ? [] : untrustedProjectConfig([ctx.cwd, ...(options.additionalDirectories ?? [])]),
    readOnly: [agentFilesRoot()],
    overlays,
  });
  ctx.emit('agent.sandbox', { agentName: options.name, sandbox: 'on', masked: confined.masked.map((m) => m.path), incomplete: confined.incomplete });
  return { command: confined.command, env: confined.env, sandboxed: true };
}

/**
 * What an agent would read as its project's own configuration in a folder Sage has not trusted: its
 * settings, hooks, MCP servers and commands. The launch flags already tell each agent not to load
 * them; hidden too, so an agent whose flags miss one (Codex's project config, a future version's new
 * source) still cannot.
 */
const PROJECT_AGENT_CONFIG = ['.claude', '.mcp.json', '.gemini', '.qwen', '.codex', '.sage'];

function untrustedProjectConfig(folders: readonly string[]): string[] {
  return folders.flatMap((folder) => PROJECT_AGENT_CONFIG.map((entry) => join(folder, entry)));
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
