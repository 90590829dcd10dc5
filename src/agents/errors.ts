import { SageError } from '../errors/index.js';

/** `--agent NAME` names no preset, or a preset that needs a command it was not given. */
export class UnknownAgentError extends SageError {
  constructor(message: string) {
    super('agent_unknown', message);
  }
}

/** The `agents` settings (or `--agent-env`, `--agent-command`) do not validate; names the file and field. */
export class AgentConfigError extends SageError {
  constructor(message: string) {
    super('agent_config_invalid', message);
  }
}

/** The agent's process could not start, or ended without a result. */
export class AgentProcessError extends SageError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('agent_failed', message, options);
  }
}

/**
 * Sage stopped while the external agent ran or waited: its process is gone and cannot be
 * checkpointed. Its session is kept, so a follow-up (`--continue`) picks it up.
 */
export class AgentInterruptedError extends SageError {
  constructor(
    readonly agent: string,
    readonly sessionId: string | undefined,
    runId: string,
  ) {
    super(
      'agent_interrupted',
      sessionId
        ? `The external agent (${agent}) was working when Sage stopped; its session ${sessionId} is kept. Continue it with: sage run --agent ${agent} --continue ${runId} "<next message>"`
        : `The external agent (${agent}) was starting when Sage stopped, before it had a session; start the task again.`,
    );
  }
}
