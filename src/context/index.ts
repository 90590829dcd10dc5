// Context: what goes into each model request, and keeping it inside the window.

// Token estimates
export { estimateTextTokens, estimateMessageTokens, estimateConversationTokens, CHARS_PER_TOKEN, MESSAGE_OVERHEAD_TOKENS } from './estimate-tokens.js';
export type { LastCallUsage, ConversationEstimateOptions } from './estimate-tokens.js';

// Compaction
export { compactIfNeeded, compactMessages } from './compact.js';
export type { CompactionOptions, CompactionResult, CompactionStats } from './compact.js';
export { createAutoCompaction, FALLBACK_CONTEXT_WINDOW } from './auto-compaction.js';
export type { AutoCompaction, AutoCompactionOptions } from './auto-compaction.js';
export { splitHistory } from './split-history.js';
export type { HistorySplit } from './split-history.js';
export { truncateToolResult } from './truncate-tool-result.js';

// System prompt
export { buildSystemPrompt } from './system-prompt.js';
export type { SystemPromptInput, SkillSummary } from './system-prompt.js';
export { loadProjectInstructions, PROJECT_INSTRUCTION_FILES } from './project-instructions.js';
export type { ProjectInstructions } from './project-instructions.js';

// Errors
export { ContextCompactionError } from './errors.js';
