import os from 'node:os';
import { z } from 'zod';
import type { AuditLog } from './audit-log.js';
import type { Clock } from './approval-memory.js';
import type { HookDefinition, PostToolUseFunction, PreToolUseFunction } from './hooks.js';
import { permissionModeSchema } from './modes.js';
import type { ResolvedSettings } from './settings-loader.js';
import type { GateCall, GateContext, PermissionDecision } from './types.js';
import type { UserPermissionStore } from './user-permission-store.js';

/** A rule with where it came from; `root` anchors `/path` specifiers (defaults to the project root). */
export const ruleSpecSchema = z.object({
  rule: z.string().min(1, 'a rule cannot be empty'),
  behavior: z.enum(['allow', 'ask', 'deny']),
  source: z.string().default('cli'),
  root: z.string().optional(),
});
export type RuleSpec = z.input<typeof ruleSpecSchema>;

export const engineOptionsSchema = z.object({
  mode: permissionModeSchema.default('default'),
  rules: z.array(ruleSpecSchema).default([]),
  home: z.string().min(1).default(() => os.homedir()),
  /** The project root; defaults to each call's `ctx.cwd`. */
  projectRoot: z.string().optional(),
  additionalDirectories: z.array(z.string()).default([]),
  approval: z.object({
    enabled: z.boolean().default(true),
    strictMode: z.boolean().default(false),
    toolOverrides: z.record(z.string(), z.boolean()).default({}),
    memoryWindowSeconds: z.number().positive().default(300),
  }).prefault({}),
  caseInsensitiveFs: z.boolean().optional(),
  /** Tool names rules may name without being reported as unreachable (the built-ins are always known). */
  knownTools: z.array(z.string()).default([]),
}).loose();

export interface PermissionEngineOptions extends Partial<Omit<z.input<typeof engineOptionsSchema>, 'approval'>> {
  approval?: { enabled?: boolean; strictMode?: boolean; toolOverrides?: Record<string, boolean>; memoryWindowSeconds?: number };
  /** Settings loaded with `loadSettings()`; its rules, mode, approval and hooks are merged in. */
  settings?: ResolvedSettings;
  hooks?: { preToolUse?: HookDefinition<PreToolUseFunction>[]; postToolUse?: HookDefinition<PostToolUseFunction>[] };
  userStore?: UserPermissionStore;
  audit?: AuditLog;
  /** Injectable clock (ms) for the approval memory window. */
  clock?: Clock;
  /** Called for every decision (the loop turns it into a `permission.decided` event). */
  onDecision?: (decision: PermissionDecision, call: GateCall, ctx: GateContext) => void;
  /**
   * Where "always" answers (remember local, project or user) are kept instead of the settings files;
   * the engine then does not apply the rule itself (the target, e.g. the user store, is read back).
   * `answeredBy` is who gave the answer. Session rules stay in the engine.
   */
  persistRule?: (rule: string, scope: 'local' | 'project' | 'user', ctx: GateContext, answeredBy?: string) => void | Promise<void>;
}
