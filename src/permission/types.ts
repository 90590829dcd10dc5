import type { PermissionSuggestion } from '../interaction/index.js';

export type PermissionBehavior = 'allow' | 'deny' | 'ask';

/** Where a decision came from; every decision says why it was made. */
export type DecisionSource = 'rule' | 'mode' | 'risk' | 'memory' | 'hook' | 'tool' | 'user' | 'store' | 'default';

export interface PermissionDecision {
  behavior: PermissionBehavior;
  /** Written for people and for the model: what, and why. */
  reason: string;
  /** The rule that decided, as written (`Bash(rm -rf *)`). */
  rule?: string;
  /** Where that rule came from (a settings file path, `session`, `cli`, `user:alice`). */
  ruleSource?: string;
  source: DecisionSource;
  /** For an ask: rules the person may save with an "always" answer. */
  suggestions?: PermissionSuggestion[];
  /** A hook may rewrite the input; the loop runs the rewritten input. */
  updatedInput?: unknown;
  /** The gate insists on a person even in bypass mode (never auto-approved). */
  forced?: boolean;
  /** The risk the policy assessed (UNKNOWN is treated as HIGH). */
  risk?: RiskLevel | 'UNKNOWN';
  /** The permission mode in force when the decision was made. */
  mode?: string;
}

export type RiskLevel = 'LOW' | 'MEDIUM' | 'HIGH';

/** What a tool's own `checkPermissions` may say; passthrough defers to the gate. */
export type ToolPermissionCheck =
  | { behavior: 'allow'; reason?: string }
  | { behavior: 'deny'; reason: string }
  | { behavior: 'ask'; reason: string; suggestions?: PermissionSuggestion[] }
  | { behavior: 'passthrough' };

/** A tool call as the gate sees it. */
export interface GateCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
  /** The tool's definition: risk, readOnly, permissionResource, checkPermissions. */
  tool: GateToolInfo;
}

export interface GateToolInfo {
  name: string;
  readOnly: boolean;
  requiresUserInteraction: boolean;
  risk(input: unknown): RiskLevel;
  permissionResource(input: unknown): string | undefined;
  checkPermissions(input: unknown, ctx: GateContext): ToolPermissionCheck | Promise<ToolPermissionCheck>;
}

export interface GateContext {
  runId: string;
  sessionId: string;
  userId: string;
  channel: string;
  cwd: string;
  signal?: AbortSignal;
}

/** An answer the person gave to an ask, passed back so the gate can remember it. */
export interface ApprovalRecord {
  call: GateCall;
  decision: PermissionDecision;
  approved: boolean;
  remember?: 'once' | 'session' | 'local' | 'project' | 'user';
  rule?: string;
  userId?: string;
  /** The surface the answer came through (web, cli, terminal…); the audit log falls back to the run's channel. */
  channel?: string;
  /** No one answered in time: not a denial; the audit log records it as timed out. */
  timedOut?: boolean;
  /** The reason the person typed with a denial, for the audit log. */
  message?: string;
  /** The input as the person edited it ("edit then allow"), for the audit log. */
  updatedInput?: unknown;
  /** What the person answered to a tool's question (AskUserQuestion, input, select), for the audit log. */
  answers?: Record<string, string | string[]>;
}

/**
 * The permission gate: the loop asks it about every call. The engine (rules, modes, risk, memory,
 * hooks) implements it; so does the minimal gate the loop ships with.
 */
export interface PermissionGate {
  decide(call: GateCall, ctx: GateContext): PermissionDecision | Promise<PermissionDecision>;
  /** Told what the person answered to an ask, so "always" and session memory take effect. */
  recordAnswer?(record: ApprovalRecord, ctx: GateContext): void | Promise<void>;
  /** After a call ran (PostToolUse hooks, audit). */
  afterCall?(call: GateCall, result: { content: string; isError: boolean }, ctx: GateContext): void | Promise<void>;
  /**
   * The paths the gate's Read deny rules name, for confining what an external agent's process can
   * see on its own (src/sandbox): each rule's absolute glob and its matcher, for a working directory.
   */
  readDenyPaths?(cwd: string): DeniedPath[];
}

/** A Read deny rule as a path matcher (see PermissionGate.readDenyPaths). */
export interface DeniedPath {
  rule: string;
  /** The rule's absolute glob for the working directory (`/work/p/notes.txt`, or a glob for `.env` at any depth). */
  glob: string;
  /** Does this absolute path (or a folder above it) fall under the rule? */
  matches(absolute: string): boolean;
}
