import path from 'node:path';
import { z } from 'zod';
import { InvalidInputError, formatZodError } from '../errors/index.js';
import { ApprovalMemory } from './approval-memory.js';
import { hashInput } from './canonical-json.js';
import { evaluateCall, type PipelineState } from './decision-pipeline.js';
import { engineOptionsSchema, ruleSpecSchema, type PermissionEngineOptions, type RuleSpec } from './engine-options.js';
import { PermissionScopeError, UnknownPermissionModeError } from './errors.js';
import { runCommandHook, hookMatches, DEFAULT_HOOK_TIMEOUT_MS } from './hooks.js';
import { permissionModeSchema, type PermissionMode } from './modes.js';
import { defaultCaseInsensitive } from './path-resolver.js';
import { BUILTIN_TOOLS, compileRule, ruleCoversTool, type CompiledRule } from './rule.js';
import { RuleIndex } from './rule-index.js';
import { ruleProblem, settingsPaths, type SettingsProblem } from './settings-loader.js';
import { addRuleToSettingsFile } from './settings-writer.js';
import { isShellParserLoaded, loadShellParser } from './shell-parser.js';
import type { ApprovalRecord, DeniedPath, GateCall, GateContext, PermissionDecision, PermissionGate } from './types.js';

export interface ListedRule {
  rule: string;
  behavior: 'allow' | 'ask' | 'deny';
  source: string;
}

/** The permission engine: a PermissionGate with modes, rules, memory, hooks, settings and audit. */
export interface PermissionEngine extends PermissionGate {
  decide(call: GateCall, ctx: GateContext): Promise<PermissionDecision>;
  recordAnswer(record: ApprovalRecord, ctx: GateContext): Promise<void>;
  afterCall(call: GateCall, result: { content: string; isError: boolean }, ctx: GateContext): Promise<void>;
  /** Switches the mode, also in the middle of a run. */
  setMode(mode: PermissionMode): void;
  readonly mode: PermissionMode;
  /** Adds a rule for the engine's lifetime, or for one session (`{ sessionId }`). Throws PermissionRuleError. */
  addRule(rule: string, behavior: 'allow' | 'ask' | 'deny', options?: { sessionId?: string; source?: string }): void;
  listRules(options?: { sessionId?: string }): ListedRule[];
  readDenyPaths(cwd: string): DeniedPath[];
  /** Problems found in settings and rules: malformed, unreachable, not applied until trusted. */
  settingsProblems(): SettingsProblem[];
  /** opencode's "always" semantics: which pending asks of a session a new allow rule now covers. */
  coveredAsks<T extends { call: GateCall }>(pending: readonly T[], rule: string, ctx: GateContext): Promise<T[]>;
  /** Loads the shell grammar ahead of the first Bash decision (decide() does it on demand). */
  ready(): Promise<void>;
}

const ctxSchema = z.object({
  runId: z.string(), sessionId: z.string(), userId: z.string(), channel: z.string(), cwd: z.string().min(1, 'cwd is required'),
}).loose();
const callSchema = z.object({ toolCallId: z.string(), toolName: z.string().min(1), tool: z.object({ name: z.string() }).loose() }).loose();
const recordSchema = z.object({
  approved: z.boolean(),
  remember: z.enum(['once', 'session', 'local', 'project', 'user']).optional(),
  rule: z.string().optional(),
  timedOut: z.boolean().optional(),
}).loose();

/** The checks callSchema and ctxSchema make, without building a parse result: a call that passes is valid. */
function isString(v: unknown): v is string {
  return typeof v === 'string';
}
function looksLikeCall(call: unknown): boolean {
  if (typeof call !== 'object' || call === null || Array.isArray(call)) return false;
  const c = call as Record<string, unknown>;
  const tool = c.tool as Record<string, unknown> | null | undefined;
  return isString(c.toolCallId) && isString(c.toolName) && c.toolName.length > 0 && typeof tool === 'object' && tool !== null && !Array.isArray(tool) && isString(tool.name);
}
function looksLikeCtx(ctx: unknown): boolean {
  if (typeof ctx !== 'object' || ctx === null || Array.isArray(ctx)) return false;
  const c = ctx as Record<string, unknown>;
  return isString(c.runId) && isString(c.sessionId) && isString(c.userId) && isString(c.channel) && isString(c.cwd) && c.cwd.length > 0;
}

function validate<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new InvalidInputError(`Invalid ${what}: ${formatZodError(parsed.error)}`);
  return parsed.data;
}

/**
 * Creates the permission engine.
 * @example
 * const engine = createPermissionEngine({ rules: [{ rule: 'Bash(rm -rf *)', behavior: 'deny' }] });
 * const decision = await engine.decide(call, ctx); // { behavior: 'deny', reason, rule, source: 'rule' }
 */
export function createPermissionEngine(input: PermissionEngineOptions = {}): PermissionEngine {
  const { settings, hooks, userStore, audit, clock, onDecision, persistRule, ...rest } = input;
  const options = validate(engineOptionsSchema, rest, 'permission engine options');
  const home = options.home;
  let mode: PermissionMode = options.mode !== 'default' || !settings?.defaultMode ? options.mode : settings.defaultMode;
  // `disableBypassPermissionsMode: "disable"`: bypass is never entered; asked for, the engine runs in default mode.
  const bypassDisabled = settings?.bypassDisabled === true;
  if (bypassDisabled && mode === 'bypassPermissions') mode = 'default';
  const approval = { ...options.approval, ...(settings ? { enabled: settings.approval.enabled && options.approval.enabled, strictMode: settings.approval.strictMode || options.approval.strictMode, toolOverrides: { ...settings.approval.toolOverrides, ...options.approval.toolOverrides }, memoryWindowSeconds: input.approval?.memoryWindowSeconds ?? settings.approval.memoryWindowSeconds } : {}) };
  const known = new Set([...BUILTIN_TOOLS, ...options.knownTools]);
  const problems: SettingsProblem[] = [...(settings?.problems ?? [])];
  const memory = new ApprovalMemory(() => approval.memoryWindowSeconds * 1000, clock);
  const indexes = { deny: new RuleIndex(), ask: new RuleIndex(), allow: new RuleIndex() };
  const sessionAllow = new Map<string, CompiledRule[]>();
  const merged = new Map<string, { version: number; index: RuleIndex }>();
  let version = 0;
  const preToolUse = [...(settings?.hooks.preToolUse ?? []), ...(hooks?.preToolUse ?? [])];
  const postToolUse = [...(settings?.hooks.postToolUse ?? []), ...(hooks?.postToolUse ?? [])];
  const storeCache = new Map<string, { key: string; deny: RuleIndex; allow: RuleIndex }>();

  const compile = (spec: RuleSpec, root: string): CompiledRule => {
    const s = ruleSpecSchema.parse(spec);
    return compileRule(s.rule, s.behavior, { source: s.source, root: s.root ?? root }, home);
  };
  const addCompiled = (rule: CompiledRule) => {
    indexes[rule.behavior].add(rule);
    version += 1;
  };
  for (const spec of [...(settings?.rules ?? []), ...options.rules]) {
    const root = spec.root ?? options.projectRoot ?? process.cwd();
    const problem = ruleProblem(spec.rule, spec.behavior, root, home, known);
    if (problem && !settings?.rules.includes(spec)) problems.push({ file: spec.source ?? 'cli', key: spec.rule, ...problem });
    if (problem?.severity === 'error') continue;
    addCompiled(compile(spec, root));
  }

  const allowFor = (sessionId: string): RuleIndex => {
    const extra = sessionAllow.get(sessionId);
    if (!extra?.length) return indexes.allow;
    const cached = merged.get(sessionId);
    if (cached && cached.version === version) return cached.index;
    const index = new RuleIndex([...indexes.allow.rules, ...extra]);
    merged.set(sessionId, { version, index });
    return index;
  };

  const storeFor = async (ctx: GateContext, root: string): Promise<PipelineState['store']> => {
    if (!userStore) return undefined;
    const lists = await userStore.list(ctx.userId);
    const key = JSON.stringify(lists);
    let entry = storeCache.get(ctx.userId);
    if (!entry || entry.key !== key) {
      const build = (list: string[], behavior: 'allow' | 'deny') => new RuleIndex(list.flatMap((rule) => {
        try {
          return [compileRule(rule, behavior, { source: `user:${ctx.userId}`, root }, home)];
        } catch {
          return [];
        }
      }));
      entry = { key, deny: build(lists.deny, 'deny'), allow: build(lists.allow, 'allow') };
      storeCache.set(ctx.userId, entry);
    }
    return { deny: entry.deny, allow: entry.allow, userId: ctx.userId };
  };

  const caseInsensitiveFs = options.caseInsensitiveFs ?? defaultCaseInsensitive();
  const extraRoots = [...options.additionalDirectories, ...(settings?.additionalDirectories ?? [])];
  // The environment of a working directory never changes for this engine; kept for the few a run uses.
  const envs = new Map<string, PipelineState['env']>();
  const envFor = (cwd: string): PipelineState['env'] => {
    let env = envs.get(cwd);
    if (!env) {
      env = { cwd, home, roots: [options.projectRoot ?? cwd, ...extraRoots], caseInsensitiveFs };
      if (envs.size >= 64) envs.clear();
      envs.set(cwd, env);
    }
    return env;
  };
  // The last state built without a store or an extra rule, reused while nothing it holds has changed.
  let lastState: { state: PipelineState; sessionId: string; version: number } | undefined;
  const syncState = (ctx: GateContext, store: PipelineState['store'], extraAllow?: CompiledRule): PipelineState => {
    const plain = store === undefined && extraAllow === undefined;
    if (plain && lastState && lastState.sessionId === ctx.sessionId && lastState.version === version && lastState.state.mode === mode && lastState.state.env.cwd === ctx.cwd) return lastState.state;
    let allow = allowFor(ctx.sessionId);
    if (extraAllow) allow = new RuleIndex([...allow.rules, extraAllow]);
    const state: PipelineState = {
      mode, enabled: approval.enabled, strictMode: approval.strictMode, toolOverrides: approval.toolOverrides,
      deny: indexes.deny, ask: indexes.ask, allow, store, memory, preToolUse, env: envFor(ctx.cwd),
    };
    if (plain) lastState = { state, sessionId: ctx.sessionId, version };
    return state;
  };
  const stateFor = async (ctx: GateContext, extraAllow?: CompiledRule): Promise<PipelineState> =>
    syncState(ctx, await storeFor(ctx, options.projectRoot ?? ctx.cwd), extraAllow);

  const finish = (draft: Omit<PermissionDecision, 'mode'>): PermissionDecision => {
    if (draft.behavior === 'ask' && mode === 'dontAsk') {
      return { ...draft, behavior: 'deny', reason: `dontAsk mode: this would need a person's approval, so it was not run. (${draft.reason})`, suggestions: undefined, mode };
    }
    // Drafts are made fresh for each decision, so the mode is set in place (a spread costs more than the rest).
    const decision = draft as PermissionDecision;
    decision.mode = mode;
    return decision;
  };

  const persist = async (rule: string, remember: NonNullable<ApprovalRecord['remember']>, ctx: GateContext, answeredBy?: string): Promise<void> => {
    const root = options.projectRoot ?? ctx.cwd;
    if (remember === 'session') {
      const compiled = compileRule(rule, 'allow', { source: 'session', root }, home);
      sessionAllow.set(ctx.sessionId, [...(sessionAllow.get(ctx.sessionId) ?? []), compiled]);
      version += 1;
      return;
    }
    if (remember === 'once') return;
    // A host that must not write settings files for whoever answered (the server) keeps the rule itself.
    if (persistRule) return persistRule(rule, remember, ctx, answeredBy);
    const files = settingsPaths(root, home);
    const file = remember === 'local' ? files.local : remember === 'project' ? files.project : files.user;
    const compiled = compileRule(rule, 'allow', { source: file, root: remember === 'user' ? path.join(home, '.sage') : root }, home);
    addRuleToSettingsFile(file, 'allow', rule);
    addCompiled(compiled);
  };

  let parserReady: Promise<void> | undefined;
  const ready = () => (parserReady ??= loadShellParser());

  const engine: PermissionEngine = {
    get mode() {
      return mode;
    },
    ready,
    setMode(next) {
      const parsed = permissionModeSchema.safeParse(next);
      if (!parsed.success) throw new UnknownPermissionModeError(String(next));
      // As in Claude Code, switching to a disabled bypass mode is a no-op.
      if (parsed.data === 'bypassPermissions' && bypassDisabled) return;
      mode = parsed.data;
    },
    async decide(call, ctx) {
      // Cheap guards on the hot path; zod only runs (for its error message) when one fails.
      if (!looksLikeCall(call)) validate(callSchema, call, 'tool call');
      if (!looksLikeCtx(ctx)) validate(ctxSchema, ctx, 'gate context');
      if ((call.toolName === 'Bash' || preToolUse.length > 0) && !isShellParserLoaded()) await ready();
      // Without a user store, hooks or an asynchronous tool check, everything below runs synchronously.
      const state = userStore ? await stateFor(ctx) : syncState(ctx, undefined);
      const draft = evaluateCall(call, ctx, state);
      const decision = finish(draft instanceof Promise ? await draft : draft);
      onDecision?.(decision, call, ctx);
      if (audit) await audit.append({
        at: (clock ?? Date.now)(), kind: 'decision', runId: ctx.runId, sessionId: ctx.sessionId, userId: ctx.userId, toolCallId: call.toolCallId,
        toolName: call.toolName, inputHash: hashInput(call.input), behavior: decision.behavior, reason: decision.reason, rule: decision.rule,
        ruleSource: decision.ruleSource, source: decision.source, mode,
      });
      return decision;
    },
    async recordAnswer(record, ctx) {
      const r = validate(recordSchema, record, 'approval record');
      validate(ctxSchema, ctx, 'gate context');
      const call = record.call;
      await audit?.append({
        at: (clock ?? Date.now)(), kind: 'answer', runId: ctx.runId, sessionId: ctx.sessionId, userId: record.userId ?? ctx.userId,
        toolCallId: call.toolCallId, toolName: call.toolName, inputHash: hashInput(call.input),
        answer: r.timedOut ? 'timedOut' : r.approved ? 'approved' : 'rejected', remember: r.remember, rule: r.rule,
        // The surface this answer came through (a web run can be answered with `sage respond`).
        channel: record.channel ?? ctx.channel,
        ...(typeof record.message === 'string' && record.message !== '' ? { message: record.message } : {}),
        ...(record.updatedInput !== undefined ? { updatedInput: record.updatedInput } : {}),
        ...(record.answers !== undefined ? { answers: record.answers } : {}),
      });
      if (!r.approved || r.timedOut) return;
      // The approval is bound to exactly the input the person saw.
      if (record.decision.risk === 'MEDIUM' && record.decision.source === 'risk' && r.remember !== 'once' && !approval.strictMode) {
        memory.remember(ApprovalMemory.key(ctx.channel, ctx.sessionId, call.toolName, call.input));
      }
      if (!r.remember || r.remember === 'once') return;
      // "Always" saves what was offered (one narrow rule per part), or the rule the person chose.
      const rules = r.rule ? [r.rule] : (record.decision.suggestions ?? []).map((s) => s.rule);
      for (const rule of rules) await persist(rule, r.remember, ctx, record.userId);
    },
    async afterCall(call, result, ctx) {
      for (const hook of postToolUse) {
        if (!hookMatches(hook.matcher, call.toolName)) continue;
        const event = { hookEventName: 'PostToolUse' as const, toolName: call.toolName, toolCallId: call.toolCallId, input: call.input, sessionId: ctx.sessionId, runId: ctx.runId, userId: ctx.userId, cwd: ctx.cwd, result };
        const controller = new AbortController();
        // PostToolUse hooks only observe; a failure cannot change a call that already ran.
        try {
          if ('command' in hook) await runCommandHook(hook.command, event, hook.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS, ctx.signal);
          else await hook.run(event, controller.signal);
        } catch {}
      }
    },
    addRule(rule, behavior, opts = {}) {
      const root = options.projectRoot ?? process.cwd();
      if (opts.sessionId !== undefined) {
        if (behavior !== 'allow') throw new PermissionScopeError('session', 'session rules are allow rules; add deny and ask rules to the engine or a settings file');
        const compiled = compileRule(rule, 'allow', { source: opts.source ?? 'session', root }, home);
        sessionAllow.set(opts.sessionId, [...(sessionAllow.get(opts.sessionId) ?? []), compiled]);
        version += 1;
        return;
      }
      addCompiled(compileRule(rule, behavior, { source: opts.source ?? 'runtime', root }, home));
    },
    listRules(opts = {}) {
      const listed = [...indexes.deny.rules, ...indexes.ask.rules, ...indexes.allow.rules, ...(opts.sessionId ? sessionAllow.get(opts.sessionId) ?? [] : [])];
      return listed.map((r) => ({ rule: r.raw, behavior: r.behavior, source: r.origin.source }));
    },
    readDenyPaths(cwd) {
      return indexes.deny.rules
        .filter((r) => r.kind === 'path' && r.path !== undefined && ruleCoversTool(r, 'Read'))
        .map((r) => ({ rule: r.raw, glob: r.path!.globFor(cwd), matches: (absolute: string) => r.path!.matches(absolute, cwd, false) }));
    },
    settingsProblems: () => [...problems],
    async coveredAsks(pending, rule, ctx) {
      const extra = compileRule(rule, 'allow', { source: 'session', root: options.projectRoot ?? ctx.cwd }, home);
      await ready();
      const state = await stateFor(ctx, extra);
      const covered = [];
      for (const item of pending) {
        const draft = await evaluateCall(item.call, ctx, state, false);
        if (draft.behavior === 'allow') covered.push(item);
      }
      return covered;
    },
  };
  return engine;
}
