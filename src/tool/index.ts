// Tools: the interface tools implement, the registry, and the built-ins.
export { defineTool } from './types.js';
export type { Tool, ToolContext, ToolResult } from './types.js';
export { ToolRegistry } from './registry.js';
export { askUserQuestionTool, formatAnswers } from './builtin/ask-user-question.js';
