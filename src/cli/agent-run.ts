import { homedir } from 'node:os';
import type { AgentRunSpec } from '../agents/workers.js';
import type { ChainSpec } from '../agents/chain.js';
import type { RunFlags } from './run-flags.js';
import { UsageError } from './usage-error.js';
import { agentSettings } from '../agents/agent-settings.js';
import { runSpecOf } from '../runtime/run-spec.js';
import { openStore } from '../store/open-store.js';

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
  if (follows) return followUp(flags, follows, cwd);
  const home = process.env.SAGE_HOME ?? homedir();
  if (!flags.agent) {
    if (flags.agentEnv.length) throw new UsageError("--agent-env needs --agent: it is the external agent's environment.");
    // The chain may still come from the settings, around Sage's own loop; the agents' workers (and
    // the ACP SDK they load) are for runs with --agent.
    const chain = chainOf(flags, agentSettings(cwd, home, undefined).chain);
    return chain ? { chain } : {};
  }
  const { resolveAgentRun } = await import('../agents/resolve-agent.js');
  // Its sandbox is checked with the run's other checks before it is stored (checkBeforeStart).
  const resolved = resolveAgentRun({ name: flags.agent, cwd, home, ...(flags.agentCommand ? { commandLine: flags.agentCommand } : {}), env: flags.agentEnv, ...(flags.sandbox ? { sandbox: flags.sandbox } : {}) });
  const chain = chainOf(flags, resolved.chain);
  return { agent: resolved.agent, modelSpec: `agent:${resolved.agent.name}`, ...(chain ? { chain } : {}) };
}

function chainOf(flags: RunFlags, settings: ChainSpec | undefined): ChainSpec | undefined {
  const setup = flags.setup ?? settings?.setup;
  const cleanup = flags.cleanup ?? settings?.cleanup;
  return setup || cleanup ? { ...(setup ? { setup } : {}), ...(cleanup ? { cleanup } : {}) } : undefined;
}

/** `--continue RUN` / `--fork RUN`: the agent, command and folder of that run, and its agent's session. */
async function followUp(flags: RunFlags, runId: string, cwd: string): Promise<AgentRunParts> {
  const flag = flags.continue ? '--continue' : '--fork';
  const store = await openStore({ ...(flags.db ? { db: flags.db } : {}), cwd: process.cwd() });
  try {
    const run = await store.getRun(runId);
    if (!run) throw new UsageError(`${flag} ${runId}: there is no such run in this store (sage runs list shows the runs).`);
    const spec = runSpecOf(run);
    if (!spec.agent) throw new UsageError(`${flag} ${runId}: that run was not an external agent's (it ran Sage's own loop); start a new run instead.`);
    if (flags.agent && flags.agent !== spec.agent.name) throw new UsageError(`${flag} ${runId}: that run's agent was ${spec.agent.name}, not ${flags.agent}.`);
    if (flags.cwd && cwd !== spec.cwd) throw new UsageError(`${flag} ${runId}: that run worked in ${spec.cwd}; the agent's session belongs to that folder, so --cwd cannot change it.`);
    const { agentPreset } = await import('../agents/presets.js');
    if (agentPreset(spec.agent.name).protocol === 'acp') {
      const why = `the ${spec.agent.name} agent speaks ACP, and Sage cannot continue an ACP agent's session`;
      throw new UsageError(`${flag} ${runId}: ${why} (session/load is not supported yet); start a new run instead.`);
    }
    const session = await sessionOf(store, runId);
    if (!session) throw new UsageError(`${flag} ${runId}: the agent never reported a session for that run, so there is nothing to continue.`);
    const { resumeSession: _previous, fork: _fork, sandbox: earlier, ...kept } = spec.agent;
    void _previous;
    void _fork;
    // The follow-up keeps the earlier run's sandbox unless --sandbox says otherwise.
    const sandbox = flags.sandbox ?? earlier;
    const agent = { ...kept, ...(sandbox === 'off' ? { sandbox: 'off' as const } : {}) };
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
