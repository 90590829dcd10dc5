// Subagents: the Task tool's child runs (built by the run factory, driven by the same runner, under
// the same gate, narrowed never widened), their types (built-in and agent files), and the per-run
// tools the factory adds (Task, Skill).

// Types of subagents: built-in and from agent files
export { BUILTIN_SUBAGENTS, agentFrontMatterSchema, PERMISSION_MODES, type SubagentDefinition, type SubagentPermissionMode, type WorkingDirectory } from './definition.js';
export { discoverSubagents, loadAgentFile, type SubagentCatalog } from './load-agent.js';

// Narrowing: mode, tools, working directory
export { stricterMode, childTools, childCwd, TASK_TOOL } from './narrow.js';

// A subagent's run: its metadata and id, the launcher the Task tool calls
export { childRunId, subagentMetaSchema, type SubagentMeta } from './subagent-meta.js';
export { createLauncher, type ParentRun, type ChildRunInput, type LauncherOptions } from './launcher.js';

// What the run factory uses
export { SubagentHost, AGENT_TOOL_NAMES, MAX_SUBAGENT_DEPTH, type SubagentHostOptions } from './host.js';
