// External coding agents (Claude Code, ACP agents, Codex) as the worker of a Sage run, and the action chain.
export { AGENT_PRESETS, agentPreset, splitCommandLine, type AgentPreset, type AgentProtocol } from './presets.js';
export { curatedEnvironment, parseAgentEnv } from './environment.js';
export { resolveAgentRun, requireSandbox, agentSettings, type ResolveAgentOptions } from './resolve-agent.js';
export { readAgentSettings, type AgentSettingsEntry, type ChainSettings, type SettingsFiles } from './agent-settings.js';
export { agentWorker, agentModel, runWorkerOf, supportsProtocol, type AgentRunSpec, type AgentWorkerOptions } from './workers.js';
export { chainWorker, chainActions, shouldFinalize, ChainStepFailedError, type ChainAction, type ChainSpec } from './chain.js';
export { claudeCodeWorker, type ClaudeCodeWorkerOptions } from './claude-code/worker.js';
export { AgentConfigError, AgentInterruptedError, AgentProcessError, UnknownAgentError } from './errors.js';
