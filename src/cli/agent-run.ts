import { homedir } from 'node:os';
import type { AgentRunSpec } from '../agents/workers.js';
import type { ChainSpec } from '../agents/chain.js';
import type { RunFlags } from './run-flags.js';
import { UsageError } from './usage-error.js';

/** What `--agent`, `--continue`/`--fork`, `--setup`/`--cleanup` add to a run's RunSpec. */
export interface AgentRunParts {
  agent?: AgentRunSpec;
  chain?: ChainSpec;
  /** The model slot's spec for an agent run (`agent:<name>`). */
  modelSpec?: string;
  /** A follow-up works where the run it follows did (the agent's sessions belong to a folder). */
  cwd?: string;
}

/**
 * Resolves the agent flags into RunSpec parts: the preset, its command (`--agent-command`, else the
 * settings' `agents.<name>.command`, else the preset's), the variables it gets, the session a
 * follow-up continues, and the action chain (flags, else the settings' `chain`). The settings files
 * are the run's own (managed, local and project once trusted, user).
 */
export async function agentRunParts(flags: RunFlags, cwd: string): Promise<AgentRunParts> {
  const follows = flags.continue ?? flags.fork;
  if (!flags.agent && !follows && !flags.setup && !flags.cleanup && flags.agentEnv.length === 0) {
    // The chain may still come from the settings.
    const chain = await settingsChain(cwd, undefined);
    return chain ? { chain } : {};
  }
  const agents = await import('../agents/index.js');
  if (follows) return followUp(flags, follows, cwd);
  let agent: AgentRunSpec | undefined;
  const { agent: entry, chain: settingsChainValue } = await readSettings(cwd, flags.agent);
  if (flags.agent) {
    const preset = agents.agentPreset(flags.agent);
    if (!agents.supportsProtocol(preset.protocol)) throw new UsageError(`--agent ${flags.agent}: this build of Sage cannot drive ${preset.protocol} agents.`);
    const configured = entry?.command === undefined ? undefined : typeof entry.command === 'string' ? agents.splitCommandLine(entry.command) : entry.command;
    const command = [...(flags.agentCommand ? agents.splitCommandLine(flags.agentCommand) : (configured ?? [...preset.command])), ...(flags.agentCommand ? [] : (entry?.args ?? []))];
    if (command.length === 0) throw new UsageError(`--agent ${flags.agent} needs the agent's command line: --agent-command "<program and arguments>" (or agents.${flags.agent}.command in the settings).`);
    const { env, passEnv } = splitAgentEnv(flags.agentEnv);
    agent = { name: preset.name, command, ...(Object.keys({ ...entry?.env, ...env }).length ? { env: { ...entry?.env, ...env } } : {}), ...(passEnv.length ? { passEnv } : {}) };
  } else if (flags.agentEnv.length) {
    throw new UsageError('--agent-env needs --agent: it is the external agent\'s environment.');
  }
  const chain = chainOf(flags, settingsChainValue);
  return { ...(agent ? { agent, modelSpec: `agent:${agent.name}` } : {}), ...(chain ? { chain } : {}) };
}

/** `--agent-env NAME=VALUE` is kept with the run; `--agent-env NAME` is passed through from the driving process, never stored. */
function splitAgentEnv(items: readonly string[]): { env: Record<string, string>; passEnv: string[] } {
  const env: Record<string, string> = {};
  const passEnv: string[] = [];
  for (const item of items) {
    const eq = item.indexOf('=');
    const name = eq < 0 ? item : item.slice(0, eq);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new UsageError(`--agent-env ${item}: "${name}" is not a variable name (letters, digits and _, not starting with a digit).`);
    if (eq < 0) passEnv.push(name);
    else env[name] = item.slice(eq + 1);
  }
  return { env, passEnv };
}

function chainOf(flags: RunFlags, settings: ChainSpec | undefined): ChainSpec | undefined {
  const setup = flags.setup ?? settings?.setup;
  const cleanup = flags.cleanup ?? settings?.cleanup;
  return setup || cleanup ? { ...(setup ? { setup } : {}), ...(cleanup ? { cleanup } : {}) } : undefined;
}

async function readSettings(cwd: string, agent: string | undefined): Promise<{ agent?: import('../agents/index.js').AgentSettingsEntry; chain?: ChainSpec }> {
  const [{ loadSettings }, { readAgentSettings }] = await Promise.all([import('../permission/index.js'), import('../agents/index.js')]);
  const settings = loadSettings({ projectRoot: cwd, home: process.env.SAGE_HOME ?? homedir() });
  return readAgentSettings({ ...settings.files, trusted: settings.trusted }, agent);
}

async function settingsChain(cwd: string, agent: string | undefined): Promise<ChainSpec | undefined> {
  return (await readSettings(cwd, agent)).chain;
}

/** `--continue RUN` / `--fork RUN`: the agent, command and folder of that run, and its agent's session. */
async function followUp(flags: RunFlags, runId: string, cwd: string): Promise<AgentRunParts> {
  const flag = flags.continue ? '--continue' : '--fork';
  const [{ openStore }, { runSpecOf }] = await Promise.all([import('../store/open-store.js'), import('../runtime/run-spec.js')]);
  const store = await openStore({ ...(flags.db ? { db: flags.db } : {}), cwd: process.cwd() });
  try {
    const run = await store.getRun(runId);
    if (!run) throw new UsageError(`${flag} ${runId}: there is no such run in this store (sage runs list shows the runs).`);
    const spec = runSpecOf(run);
    if (!spec.agent) throw new UsageError(`${flag} ${runId}: that run was not an external agent's (it ran Sage's own loop); start a new run instead.`);
    if (flags.agent && flags.agent !== spec.agent.name) throw new UsageError(`${flag} ${runId}: that run's agent was ${spec.agent.name}, not ${flags.agent}.`);
    if (flags.cwd && cwd !== spec.cwd) throw new UsageError(`${flag} ${runId}: that run worked in ${spec.cwd}; the agent's session belongs to that folder, so --cwd cannot change it.`);
    const session = await sessionOf(store, runId);
    if (!session) throw new UsageError(`${flag} ${runId}: the agent never reported a session for that run, so there is nothing to continue.`);
    const { resumeSession: _previous, fork: _fork, ...agent } = spec.agent;
    void _previous;
    void _fork;
    const chain = chainOf(flags, undefined);
    return {
      agent: { ...agent, resumeSession: session, ...(flags.fork ? { fork: true } : {}) },
      modelSpec: `agent:${agent.name}`,
      cwd: spec.cwd,
      ...(chain ? { chain } : {}),
    };
  } finally {
    await store.close();
  }
}

/** The agent's session id: from the run's checkpoint, else the last `agent.session` event. */
async function sessionOf(store: import('../store/index.js').Store, runId: string): Promise<string | undefined> {
  const checkpoint = await store.loadCheckpoint(runId);
  const kept = (checkpoint?.checkpoint.state as { agentSession?: { sessionId?: unknown } } | undefined)?.agentSession?.sessionId;
  if (typeof kept === 'string') return kept;
  const events = await store.readEvents(runId);
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.type === 'agent.session') return event.data.sessionId;
  }
  return undefined;
}
