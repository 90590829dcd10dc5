// Tools: the interface tools implement, the registry, and the built-ins.
export { defineTool } from './types.js';
export type { Tool, ToolContext, ToolResult } from './types.js';
export { ToolRegistry } from './registry.js';
export {
  builtinTools,
  askUserQuestionTool,
  formatAnswers,
  bashTool,
  createBashTool,
  readTool,
  writeTool,
  editTool,
  globTool,
  grepTool,
  createGrepTool,
  unifiedDiff,
  READ_FILES_KEY,
  BASH_DEFAULT_TIMEOUT_MS,
  BASH_MAX_TIMEOUT_MS,
} from './builtin/index.js';
export type { BashInput, BashOutcome, BashToolOptions, GrepBackend, GrepToolOptions } from './builtin/index.js';
