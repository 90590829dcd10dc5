/**
 * The permission engine: rules in Claude Code's syntax, shell- and path-aware matching, the
 * decision pipeline, modes, risk, session memory, hooks, settings files and the audit trail.
 */

// Gate contract (shared with the loop and tools)
export type {
  ApprovalRecord, DecisionSource, DeniedPath, GateCall, GateContext, GateToolInfo, PermissionBehavior, PermissionDecision,
  PermissionGate, RiskLevel, ToolPermissionCheck,
} from './types.js';
export { minimalGate, allowAllGate } from './minimal-gate.js';

// The engine
export { createPermissionEngine, type PermissionEngine, type ListedRule } from './engine.js';
export type { PermissionEngineOptions, RuleSpec } from './engine-options.js';
export { rulesFromLists } from './rule-lists.js';
export { permissionModeSchema, MODE_DESCRIPTIONS, type PermissionMode } from './modes.js';
export { builtinToolInfo } from './builtin-tool-traits.js';

// Rules and matching
export { parseRule, compileRule, type ParsedRule, type CompiledRule } from './rule.js';
export { compileBashPattern, escapeBashPattern } from './bash-pattern.js';
export { compilePathPattern, escapeGlob } from './path-pattern.js';
export { analyzeShell, type ShellAnalysis, type ShellPart } from './shell-analysis.js';
export { loadShellParser } from './shell-parser.js';
export { withoutExactShellWrapper } from './exact-shell-wrapper.js';
export { classifyRisk, type AssessedRisk } from './risk-classifier.js';

// Memory, hooks and hashing
export { ApprovalMemory, type Clock } from './approval-memory.js';
export { canonicalJson, hashInput } from './canonical-json.js';
export type { HookDefinition, HookVerdict, PreToolUseEvent, PostToolUseEvent, PreToolUseFunction, PostToolUseFunction } from './hooks.js';

// Settings files and folder trust
export { loadSettings, settingsPaths, type ResolvedSettings, type SettingsProblem, type SettingsSources, type SettingsScope } from './settings-loader.js';
export { settingsFileSchema, type SettingsFile } from './settings-schema.js';
export { addRuleToSettingsFile, removeRuleFromSettingsFile, updateJsonFile } from './settings-writer.js';
export { isFolderTrusted, listTrustedFolders, trustCommandFor, trustedFoldersFile, trustFolder, untrustFolder } from './trusted-folders.js';
export { findProjectRoot, foldersUpTo } from './project-folders.js';

// Stores (backends in src/store/ implement these)
export { InMemoryUserPermissionStore, type UserPermissionStore } from './user-permission-store.js';
export { InMemoryAuditLog, type AuditLog, type AuditRecord, type AuditQuery } from './audit-log.js';

// Errors
export { PermissionRuleError, SettingsFileError, ShellParserUnavailableError, UnknownPermissionModeError, PermissionScopeError } from './errors.js';
