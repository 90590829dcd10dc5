import { ApprovalMemory } from './approval-memory.js';
import { buildSubject, type CallSubject } from './call-subject.js';
import { isInside, isSymlink, throughDanglingLink } from './path-resolver.js';
import { runPreToolUseHooks, type HookDefinition, type HookOutcome, type PreToolUseFunction } from './hooks.js';
import type { PermissionMode } from './modes.js';
import { criticalRemoval, protectedWrite } from './protected-paths.js';
import { classifyRisk } from './risk-classifier.js';
import type { CompiledRule } from './rule.js';
import { allowCoverage, insideRoots, restrictiveHit, type EvaluationEnv, type RuleHit } from './rule-evaluation.js';
import type { RuleIndex } from './rule-index.js';
import { suggestRules } from './suggestions.js';
import type { GateCall, GateContext, PermissionDecision } from './types.js';

/** What one evaluation reads from the engine. */
export interface PipelineState {
  mode: PermissionMode;
  enabled: boolean;
  strictMode: boolean;
  toolOverrides: Record<string, boolean>;
  deny: RuleIndex;
  ask: RuleIndex;
  /** Allow rules, session rules of this session included. */
  allow: RuleIndex;
  store?: { deny: RuleIndex; allow: RuleIndex; userId: string };
  memory: ApprovalMemory;
  preToolUse: readonly HookDefinition<PreToolUseFunction>[];
  env: EvaluationEnv;
}

type Draft = Omit<PermissionDecision, 'mode'>;

function fromRule(behavior: PermissionDecision['behavior'], hit: RuleHit, reason: string, source: PermissionDecision['source'] = 'rule'): Draft {
  return { behavior, reason, rule: hit.rule.raw, ruleSource: hit.rule.origin.source, source };
}

function describe(call: GateCall, subject: CallSubject): string {
  if (call.toolName === 'Bash') return `Bash command \`${String((call.input as { command?: unknown })?.command ?? '')}\``;
  const p = subject.reads[0] ?? subject.writes[0];
  return p ? `${call.toolName} on ${p.raw}` : call.toolName;
}

/**
 * The decision pipeline, in order: enabled? → deny rules → ask rules → tool.checkPermissions →
 * requiresUserInteraction → mode → allow rules → the user's stored permissions → session approval
 * memory → risk policy → ask. Hooks run first; whatever they say, deny and ask rules still apply.
 * Without hooks and with a synchronous checkPermissions the whole evaluation is synchronous (no
 * promise is made); otherwise a promise of the same draft is returned.
 */
export function evaluateCall(call: GateCall, ctx: GateContext, state: PipelineState, runHooks = true): Draft | Promise<Draft> {
  if (runHooks && state.preToolUse.length > 0) return evaluateWithHooks(call, ctx, state);
  return pipeline(call, ctx, state, NO_HOOK);
}

const NO_HOOK: HookOutcome = Object.freeze({});

async function evaluateWithHooks(call: GateCall, ctx: GateContext, state: PipelineState): Promise<Draft> {
  const hook = await runPreToolUseHooks(state.preToolUse, {
    hookEventName: 'PreToolUse', toolName: call.toolName, toolCallId: call.toolCallId, input: call.input,
    sessionId: ctx.sessionId, runId: ctx.runId, userId: ctx.userId, cwd: ctx.cwd,
  }, ctx.signal);
  if (hook.updatedInput !== undefined) {
    // A rewritten input is checked again from the start; the hook's own verdict still counts.
    const rewritten = { ...call, input: hook.updatedInput };
    const again = await pipeline(rewritten, ctx, state, { ...hook, updatedInput: undefined });
    return { ...again, updatedInput: hook.updatedInput };
  }
  return pipeline(call, ctx, state, hook);
}

type Check = Awaited<ReturnType<GateCall['tool']['checkPermissions']>>;

function failedCheck(call: GateCall, error: unknown): Check {
  return { behavior: 'ask' as const, reason: `${call.toolName}'s own permission check failed (${error instanceof Error ? error.message : String(error)}).` };
}

function pipeline(call: GateCall, ctx: GateContext, state: PipelineState, hook: HookOutcome): Draft | Promise<Draft> {
  const { env } = state;
  let resource: string | undefined;
  try {
    resource = call.tool.permissionResource(call.input);
  } catch {}
  // `WebFetch(domain:…)` rules read the URL even when the tool names no resource of its own.
  if (resource === undefined && call.toolName === 'WebFetch') {
    const url = (call.input as { url?: unknown } | null)?.url;
    if (typeof url === 'string') resource = url;
  }
  const subject = buildSubject(call.toolName, call.input, env, resource);
  const what = describe(call, subject);

  const deny = restrictiveHit(state.deny, subject, env);
  if (deny && !deny.suspected) return fromRule('deny', deny, `${what} is denied by the rule ${deny.rule.raw} (${deny.rule.origin.source}), which matches ${deny.subject}. Do not retry it in another form; ask the person or choose another approach.`);
  const storeDeny = state.store ? restrictiveHit(state.store.deny, subject, env) : undefined;
  if (storeDeny && !storeDeny.suspected) return fromRule('deny', storeDeny, `${what} is denied by ${state.store!.userId}'s stored rule ${storeDeny.rule.raw}. Do not retry it in another form.`, 'store');
  const critical = criticalRemoval(subject);
  const linked = linkedWrite(subject, env);
  if (linked) return { behavior: 'deny', reason: `${what}: refusing to write ${linked.raw}, ${linked.why}. Write to the link's target path instead: ${linked.real}.`, source: 'default' };
  if (!state.enabled) {
    if (critical) return { behavior: 'ask', reason: `${what}: ${critical}.`, source: 'risk', forced: true };
    return { behavior: 'allow', reason: 'Approval is disabled in the settings; no deny rule matches.', source: 'default' };
  }
  if (hook.decision === 'deny') return { behavior: 'deny', reason: `${what} was blocked by the hook ${hook.hook}${hook.reason ? `: ${hook.reason}` : '.'}`, source: 'hook' };

  const ask = restrictiveHit(state.ask, subject, env);
  if (ask) return { ...fromRule('ask', ask, `${what} needs approval: the rule ${ask.rule.raw} (${ask.rule.origin.source}) asks for ${ask.subject}.`), forced: true };
  const suspect = deny ?? storeDeny;
  if (suspect) return { ...fromRule('ask', suspect, `${what} may touch a path denied by ${suspect.rule.raw} (${suspect.subject}); a person must confirm.`), forced: true };
  if (critical) return { behavior: 'ask', reason: `${what}: ${critical}. This is never run without a person's yes.`, source: 'risk', forced: true };

  let check: Check | Promise<Check>;
  try {
    check = call.tool.checkPermissions(call.input, ctx);
  } catch (error) {
    check = failedCheck(call, error);
  }
  if (check instanceof Promise || (check != null && typeof (check as { then?: unknown }).then === 'function')) {
    return Promise.resolve(check).then(
      (c) => afterCheck(call, ctx, state, hook, subject, what, c),
      (error: unknown) => afterCheck(call, ctx, state, hook, subject, what, failedCheck(call, error)),
    );
  }
  return afterCheck(call, ctx, state, hook, subject, what, check as Check);
}

function afterCheck(call: GateCall, ctx: GateContext, state: PipelineState, hook: HookOutcome, subject: CallSubject, what: string, check: Check): Draft {
  const { env } = state;
  if (check.behavior === 'deny') return { behavior: 'deny', reason: check.reason, source: 'tool' };
  if (check.behavior === 'ask') return { behavior: 'ask', reason: check.reason, source: 'tool', suggestions: check.suggestions, forced: true };
  if (hook.decision === 'ask') return { behavior: 'ask', reason: `The hook ${hook.hook} asks for approval of ${what}${hook.reason ? `: ${hook.reason}` : '.'}`, source: 'hook', forced: true };
  if (hook.failed) return { behavior: 'ask', reason: `${what} needs approval because ${hook.failed}.`, source: 'hook', forced: true };

  // A tool that asks the person itself (AskUserQuestion) runs in every mode but dontAsk, where nobody answers.
  if (call.tool.requiresUserInteraction) {
    if (state.mode === 'dontAsk') return { behavior: 'deny', reason: `dontAsk mode: ${call.toolName} needs a person to answer, so it was not run.`, source: 'mode' };
    return { behavior: 'allow', reason: `${call.toolName} asks the person itself.`, source: 'tool' };
  }
  if (state.mode === 'bypassPermissions') return { behavior: 'allow', reason: 'bypassPermissions mode allows everything that no deny or ask rule stops.', source: 'mode' };
  const guarded = protectedWrite(subject, env.home);
  if (guarded) return { behavior: 'ask', reason: `${what} needs approval: ${guarded}.`, source: 'default' };
  if (check.behavior === 'allow') return { behavior: 'allow', reason: check.reason ?? `${call.toolName} allowed this call itself.`, source: 'tool' };

  const readOnly = isReadOnlyCall(call, subject);
  if (state.mode === 'plan' && !readOnly) {
    return { behavior: 'deny', reason: `Plan mode: only read-only tools run, and ${what} could change things. Finish the plan and present it for approval; the person decides when to leave plan mode.`, source: 'mode' };
  }
  const unallowable = unallowableReasons(subject);
  if (unallowable.length > 0) return { behavior: 'ask', reason: `${what} needs approval: ${unallowable.join('; ')}.`, source: 'default', risk: subject.hard.length > 0 ? 'UNKNOWN' : 'HIGH', suggestions: [] };
  if (hook.decision === 'allow') return { behavior: 'allow', reason: `The hook ${hook.hook} allowed ${what}${hook.reason ? `: ${hook.reason}` : '.'}`, source: 'hook' };
  if (state.mode === 'acceptEdits' && editsInsideProject(subject, env)) return { behavior: 'allow', reason: `acceptEdits mode allows file edits inside the project (${what}).`, source: 'mode' };

  const allow = allowCoverage(state.allow, subject, env);
  if (allow.covered) return allowedBy(allow.hits, what, 'rule');
  if (state.store) {
    const stored = allowCoverage(state.store.allow, subject, env);
    if (stored.covered) return allowedBy(stored.hits, what, 'store');
  }
  if (!state.strictMode && state.memory.size > 0 && state.memory.has(ApprovalMemory.key(ctx.channel, ctx.sessionId, call.toolName, call.input))) {
    return { behavior: 'allow', reason: `A person approved this exact ${what} in this session within the approval window.`, source: 'memory' };
  }
  return riskPolicy(call, subject, state, what);
}

/**
 * Writes Claude Code refuses outright: a file tool writing a path that is itself a symbolic link,
 * and any write through a dangling symlink inside the working directories (it would create a file
 * wherever the link points, which the path does not show).
 */
function linkedWrite(subject: CallSubject, env: EvaluationEnv): { raw: string; real: string; why: string } | undefined {
  for (const p of subject.writes) {
    if (p.real === p.abs) continue;
    if (subject.toolName !== 'Bash' && isSymlink(p.abs)) return { raw: p.raw, real: p.real, why: 'it is a symbolic link' };
    if (env.roots.some((r) => isInside(p.abs, r, env.caseInsensitiveFs)) && throughDanglingLink(p.abs, env.roots)) {
      return { raw: p.raw, real: p.real, why: 'it goes through a dangling symbolic link' };
    }
  }
  return undefined;
}

function allowedBy(hits: CompiledRule[], what: string, source: 'rule' | 'store'): Draft {
  const first = hits[0]!;
  const rules = [...new Set(hits.map((h) => h.raw))];
  return { behavior: 'allow', reason: `${what} is allowed by ${rules.join(', ')}.`, rule: first.raw, ruleSource: first.origin.source, source };
}

function riskPolicy(call: GateCall, subject: CallSubject, state: PipelineState, what: string): Draft {
  const risk = classifyRisk(subject, call.tool, call.input, state.env);
  const override = state.toolOverrides[call.toolName];
  if (override === false) return { behavior: 'allow', reason: `approval.toolOverrides lets ${call.toolName} run without asking.`, source: 'risk', risk };
  // Suggestions are only offered with an ask, so they are only worked out for one.
  if (override === true) return { behavior: 'ask', reason: `approval.toolOverrides requires approval for every ${call.toolName} call.`, source: 'risk', risk, suggestions: suggestRules(subject, state.env.cwd) };
  if (risk === 'LOW' && !subject.unknownCwd) return { behavior: 'allow', reason: `${what} is low risk (read-only, inside the project).`, source: 'risk', risk };
  const suggestions = suggestRules(subject, state.env.cwd);
  const level = risk === 'UNKNOWN' ? 'of unknown risk (treated as HIGH)' : `${risk} risk`;
  const memo = risk === 'MEDIUM' && !state.strictMode ? ' An approval is remembered for this exact call for the approval window.' : '';
  return { behavior: 'ask', reason: `${what} is ${level} and no rule allows it; a person must approve.${memo}`, source: 'risk', risk, suggestions };
}

/** Why no rule, hook, mode or memory may allow the call: what its text cannot show, and variables that change what runs. */
function unallowableReasons(subject: CallSubject): string[] {
  const env = subject.dangerousEnv ?? [];
  if (env.length === 0) return subject.hard;
  const names = env.join(', ');
  return [...subject.hard, `it sets ${names}, which ${env.length === 1 ? 'changes' : 'change'} which program runs or what it loads (no allow rule covers that)`];
}

function isReadOnlyCall(call: GateCall, subject: CallSubject): boolean {
  if (call.toolName === 'Bash') return subject.hard.length === 0 && !subject.dangerousEnv?.length && subject.writes.length === 0 && subject.commands.every((c) => c.readOnly);
  return call.tool.readOnly && subject.writes.length === 0;
}

function editsInsideProject(subject: CallSubject, env: EvaluationEnv): boolean {
  if (subject.hard.length > 0 || subject.dangerousEnv?.length || subject.unknownCwd || subject.shell?.heredoc) return false;
  if (subject.toolName === 'Bash' && !subject.commands.every((c) => c.readOnly || c.fileEdit)) return false;
  if (subject.toolName !== 'Bash' && subject.writes.length === 0) return false;
  return subject.writes.every((p) => insideRoots(p, env)) && subject.reads.every((p) => insideRoots(p, env));
}
