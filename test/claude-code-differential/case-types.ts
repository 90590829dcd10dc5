import type { PermissionMode } from '../../src/permission/modes.js';

/**
 * One differential case: a tool call made under a rule set and a mode, in the scratch layout
 * (scratch-layout.ts). Strings may use `%P%` (the scratch project, absolute) and `%H%` (the fake
 * home, absolute); both are substituted the same way for Claude Code and for Sage.
 */
export interface DifferentialCase {
  /** Stable and unique: the cache is keyed by it. */
  id: string;
  /** The settings file's content (written to %P%/differential-settings.json and passed as --settings). */
  settings: SettingsJson;
  mode: PermissionMode;
  /** Extra files for this case, beyond the shared layout (their group gets its own scratch). */
  files?: ScratchEntry[];
  /** Start the fake MCP server `fake` (tools mcp__fake__echo, mcp__fake__wipe) for this case's process. */
  mcp?: boolean;
  tool: string;
  input: Record<string, unknown>;
  note: string;
}

export interface SettingsJson {
  permissions?: { allow?: string[]; ask?: string[]; deny?: string[]; additionalDirectories?: string[]; defaultMode?: string; disableBypassPermissionsMode?: string };
  hooks?: Record<string, unknown>;
  [key: string]: unknown;
}

/** A file (`content`), a folder (`dir`) or a symlink (`link`, may dangle), under %P% or %H%. */
export type ScratchEntry =
  | { path: string; content: string }
  | { path: string; dir: true }
  | { path: string; link: string };

export type CcDecision = 'allow' | 'ask' | 'deny' | 'unknown';

export interface CachedDecision {
  decision: CcDecision;
  /** What was seen on the wire, for the unknown ones and for debugging. */
  evidence: string;
}

export interface DecisionCache {
  claudeCodeVersion: string;
  /** A hash of each case's definition, so an edited case is known to be stale. */
  cases: Record<string, CachedDecision & { caseHash: string }>;
}
