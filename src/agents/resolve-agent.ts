import { agentSettings, type ChainSettings } from './agent-settings.js';
import { AgentConfigError, UnknownAgentError } from './errors.js';
import { refuseOwnedFlags } from './owned-flags.js';
import { agentPreset, splitCommandLine } from './presets.js';
import { supportsProtocol, type AgentRunSpec } from './workers.js';
import { sandboxAvailable, SandboxUnavailableError } from '../sandbox/index.js';

export interface ResolveAgentOptions {
  /** The preset (`claude-code`, `gemini`, `qwen`, `codex`, `acp`). */
  name: string;
  /** The run's folder: its settings files are read (a project's own only once the folder is trusted). */
  cwd: string;
  /** `~` of the settings. */
  home: string;
  /** The person's command line for the agent (the CLI's --agent-command); never from a web client. */
  commandLine?: string;
  /** `NAME=VALUE` (kept with the run) and `NAME` (passed through from the driving process, never stored). */
  env?: readonly string[];
  /** `--sandbox on|off`; default the settings' `agents.<name>.sandbox`, else on. */
  sandbox?: 'on' | 'off';
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * An agent run's spec from its preset and the settings: the command (`commandLine`, else
 * `agents.<name>.command` + `args`, else the preset's), the variables it gets, and the settings'
 * action chain. Throws UnknownAgentError / AgentConfigError with a message a person can act on.
 */
export function resolveAgentRun(options: ResolveAgentOptions): { agent: AgentRunSpec; chain?: ChainSettings } {
  const preset = agentPreset(options.name);
  if (!supportsProtocol(preset.protocol)) throw new UnknownAgentError(`The ${preset.name} agent speaks ${preset.protocol}, which this build of Sage cannot drive.`);
  const { agent: entry, chain } = agentSettings(options.cwd, options.home, preset.name);
  const configured = entry?.command === undefined ? undefined : typeof entry.command === 'string' ? splitCommandLine(entry.command) : entry.command;
  const command = options.commandLine ? splitCommandLine(options.commandLine) : [...(configured ?? preset.command), ...(entry?.args ?? [])];
  if (command.length === 0) throw new UnknownAgentError(`The ${preset.name} agent needs its command line: --agent-command "<program and arguments>", or agents.${preset.name}.command in the settings.`);
  refuseOwnedFlags(preset, command);
  const env: Record<string, string> = { ...entry?.env };
  const passEnv: string[] = [];
  for (const item of options.env ?? []) {
    const eq = item.indexOf('=');
    const name = eq < 0 ? item : item.slice(0, eq);
    if (!NAME.test(name)) throw new AgentConfigError(`--agent-env ${item}: "${name}" is not a variable name (letters, digits and _, not starting with a digit).`);
    if (eq < 0) passEnv.push(name);
    else env[name] = item.slice(eq + 1);
  }
  const sandbox = options.sandbox ?? entry?.sandbox;
  const agent: AgentRunSpec = { name: preset.name, command, ...(Object.keys(env).length ? { env } : {}), ...(passEnv.length ? { passEnv } : {}), ...(sandbox === 'off' ? { sandbox: 'off' as const } : {}) };
  return { agent, ...(chain ? { chain } : {}) };
}

/**
 * Refuses an agent run that needs its OS sandbox where none works (SandboxUnavailableError, naming
 * the package to install), before the run is stored.
 */
export async function requireSandbox(agent: Pick<AgentRunSpec, 'sandbox'>): Promise<void> {
  if (agent.sandbox === 'off') return;
  const available = await sandboxAvailable();
  if (!available.ok) throw new SandboxUnavailableError(available.reason);
}

export { agentSettings };
