// The built-in tools, with the names and input fields of Claude Code, which models are trained on.
import type { Tool } from '../types.js';
import { askUserQuestionTool } from './ask-user-question.js';
import { bashTool } from './bash.js';
import { editTool } from './edit.js';
import { globTool } from './glob.js';
import { grepTool } from './grep.js';
import { readTool } from './read.js';
import { writeTool } from './write.js';
import { webFetchTool } from './web-fetch.js';
import { webSearchTool } from './web-search.js';

// The tools
export { askUserQuestionTool, formatAnswers } from './ask-user-question.js';
export { bashTool, createBashTool, BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS, BASH_MAX_OUTPUT_CHARS } from './bash.js';
export type { BashInput, BashOutcome, BashToolOptions } from './bash.js';
export { readTool, READ_DEFAULT_LIMIT, READ_MAX_BYTES, READ_MAX_LINE_CHARS } from './read.js';
export type { ReadInput } from './read.js';
export { writeTool } from './write.js';
export type { WriteInput } from './write.js';
export { editTool } from './edit.js';
export type { EditInput } from './edit.js';
export { globTool, GLOB_MAX_RESULTS } from './glob.js';
export type { GlobInput } from './glob.js';
export { grepTool, createGrepTool } from './grep.js';
export type { GrepInput, GrepBackend, GrepToolOptions } from './grep.js';
export { webFetchTool, createWebFetchTool, loadWebSettings, webSettingsSchema, WEB_FETCH_DEFAULTS } from './web-fetch.js';
export type { WebFetchInput, WebFetchToolOptions, WebSettings } from './web-fetch.js';
export { webSearchTool, createWebSearchTool } from './web-search.js';
export type { WebSearchInput, WebSearchToolOptions } from './web-search.js';
export { htmlToText } from './web-fetch-html.js';

// Helpers other modules use: the read-first state, diffs for front ends
export { READ_FILES_KEY } from './support/read-state.js';
export { unifiedDiff } from './support/unified-diff.js';

/**
 * Every built-in tool, for a registry: `new ToolRegistry(builtinTools(), cwd)`.
 *
 * @example const registry = new ToolRegistry(builtinTools());
 */
export function builtinTools(): Tool[] {
  return [bashTool, readTool, writeTool, editTool, globTool, grepTool, askUserQuestionTool, webFetchTool, webSearchTool];
}
