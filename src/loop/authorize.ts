import { isDeepStrictEqual } from 'node:util';
import type { Remember } from '../interaction/index.js';
import type { ToolCall } from '../model/types.js';
import type { GateCall, PermissionDecision } from '../permission/types.js';
import type { Tool } from '../tool/types.js';
import { formatZodError } from '../errors/format-zod-error.js';
import { approvalPreview } from './approval-preview.js';
import { toolContext } from './execute-tool.js';
import { modelTexts } from './model-texts.js';
import type { RunContext } from './run-context.js';

/** The data of a `permission.decided` event. */
export interface PermissionDecidedData {
  toolCallId: string;
  toolName: string;
  behavior: PermissionDecision['behavior'];
  reason: string;
  rule?: string;
  ruleSource?: string;
  source: PermissionDecision['source'];
}

export type Authorization =
  | { allowed: true; input: unknown; decision: PermissionDecision; answeredBy?: string; note?: string; remember?: Remember }
  | { allowed: false; decision: PermissionDecision; modelText: string; answeredBy?: string; rejectedByUser?: boolean };

/** Re-asks allowed when a hook rewrites an input the person already approved. */
const MAX_ASKS = 3;

/**
 * Passes one call through the gate and, when it asks, through a person. An approval is bound to
 * exactly the input the person saw: an edited input is checked again, and if the gate then changes
 * it (a hook rewrite), the person is asked again.
 *
 * Returns a plain value when the gate answered synchronously with allow or deny (the common path
 * allocates no promise); a promise when the gate's answer is one or a person is asked.
 */
export function authorize(ctx: RunContext, call: ToolCall, tool: Tool, input: unknown, rejected: string | undefined): Authorization | Promise<Authorization> {
  const gateCall = toGateCall(ctx, call, tool, input);
  const decision = decide(ctx, gateCall);
  if (isThenable(decision)) return decision.then((d) => decided(ctx, call, tool, input, rejected, gateCall, d));
  return decided(ctx, call, tool, input, rejected, gateCall, decision);
}

function decided(
  ctx: RunContext,
  call: ToolCall,
  tool: Tool,
  input: unknown,
  rejected: string | undefined,
  gateCall: GateCall,
  decision: PermissionDecision,
): Authorization | Promise<Authorization> {
  let current = input;
  if (decision.updatedInput !== undefined) {
    const checked = tool.inputSchema.safeParse(decision.updatedInput);
    if (!checked.success) {
      const denied = { behavior: 'deny' as const, reason: `a hook rewrote the input into an invalid one (${formatZodError(checked.error)})`, source: decision.source };
      return { allowed: false, decision: denied, modelText: modelTexts.deniedByGate(call.name, current, denied.reason) };
    }
    current = checked.data;
  }
  if (decision.behavior === 'allow') return { allowed: true, input: current, decision };
  if (decision.behavior === 'deny') return { allowed: false, decision, modelText: modelTexts.deniedByGate(call.name, current, decision.reason, decision.rule) };
  if (tool.validate) return precondition(ctx, call, tool, current).then((problem) => (problem === undefined ? beforeAsk(ctx, call, tool, input, current, rejected, gateCall, decision) : problem));
  return beforeAsk(ctx, call, tool, input, current, rejected, gateCall, decision);
}

/**
 * The tool's own preconditions, checked after the gate's deny (a denied call is reported as
 * denied) and before anyone is asked: a person approves only a call that can run.
 */
async function precondition(ctx: RunContext, call: ToolCall, tool: Tool, input: unknown): Promise<Authorization | undefined> {
  let problem: string | undefined;
  try {
    problem = await tool.validate!(input, toolContext(ctx, call.id, tool, input));
  } catch (error) {
    problem = error instanceof Error ? error.message : String(error);
  }
  if (problem === undefined) return undefined;
  const d: PermissionDecision = { behavior: 'deny', reason: `not run: ${problem}`, source: 'tool' };
  return { allowed: false, decision: d, modelText: modelTexts.preconditionFailed(call.name, problem) };
}

function beforeAsk(
  ctx: RunContext,
  call: ToolCall,
  tool: Tool,
  input: unknown,
  current: unknown,
  rejected: string | undefined,
  gateCall: GateCall,
  decision: PermissionDecision,
): Authorization | Promise<Authorization> {
  if (rejected !== undefined) {
    const d: PermissionDecision = { behavior: 'deny', reason: `cancelled: the user rejected ${rejected} earlier in this turn`, source: 'user' };
    return { allowed: false, decision: d, modelText: modelTexts.cascadeRejected(call.name, rejected) };
  }
  if (ctx.mode.type === 'batch') {
    const d: PermissionDecision = { behavior: 'deny', reason: `batch mode: no person can approve (${decision.reason})`, source: 'mode', rule: decision.rule };
    return { allowed: false, decision: d, modelText: modelTexts.batchDenied(call.name, decision.reason) };
  }
  return ask(ctx, call, tool, input, current, gateCall, decision);
}

/** The gate said ask: ask a person (again, when a hook rewrites what they approved). */
async function ask(
  ctx: RunContext,
  call: ToolCall,
  tool: Tool,
  input: unknown,
  current: unknown,
  firstCall: GateCall,
  decision: PermissionDecision,
): Promise<Authorization> {
  for (let attempt = 0; attempt < MAX_ASKS; attempt++) {
    // The ask itself is a decision too: front ends and the audit trail see it before the answer.
    ctx.emit('permission.decided', decisionData(call, 'ask', decision));
    const outcome = await ctx.interact({
      id: `${ctx.runId}:${call.id}:permission${attempt > 0 ? `:${attempt}` : ''}`,
      kind: 'confirm',
      title: `Allow ${call.name}?`,
      description: decision.reason,
      reason: decision.reason,
      input: current,
      suggestions: decision.suggestions,
      editable: true,
      toolCallId: call.id,
      toolName: call.name,
      metadata: { ...(await approvalPreview(call.name, current, ctx.gateContext.cwd, decision)), ...(decision.rule ? { rule: decision.rule, forced: decision.forced ?? false } : {}) },
    });
    ctx.throwIfStopped();
    if (outcome.status === 'expired') {
      // The audit keeps a timeout as its own answer (not a denial), like the model's text says.
      await ctx.gate.recordAnswer?.({ call: firstCall.input === current ? firstCall : toGateCall(ctx, call, tool, current), decision, approved: false, timedOut: true }, ctx.gateContext);
      const d: PermissionDecision = { behavior: 'deny', reason: `timed out: ${outcome.reason}`, source: 'user' };
      return { allowed: false, decision: d, modelText: modelTexts.askTimedOut(call.name, outcome.reason) };
    }
    if (outcome.status === 'cancelled') {
      const d: PermissionDecision = { behavior: 'deny', reason: `not approved: ${outcome.reason}`, source: 'user' };
      const text = outcome.reason.startsWith('batch mode') ? modelTexts.batchDenied(call.name, decision.reason) : modelTexts.askCancelled(call.name, outcome.reason);
      return { allowed: false, decision: d, modelText: text };
    }
    const response = outcome.response;
    // The call the gate decided on, unless the input changed since.
    const gateCall = firstCall.input === current ? firstCall : toGateCall(ctx, call, tool, current);
    if (!response.confirmed) {
      await ctx.gate.recordAnswer?.({ call: gateCall, decision, approved: false, remember: response.remember, rule: response.rule, userId: response.userId, channel: response.channel, message: response.message }, ctx.gateContext);
      const auto = automaticPolicy(response.userId);
      const byUser = response.message ? `denied by the user: ${response.message}` : 'denied by the user';
      const denied = auto ? `denied automatically (--auto ${auto})` : byUser;
      const d: PermissionDecision = { behavior: 'deny', reason: denied, source: 'user' };
      return { allowed: false, decision: d, modelText: modelTexts.deniedByUser(call.name, current, response.message), answeredBy: response.userId, rejectedByUser: true };
    }
    if (response.updatedInput === undefined || isDeepStrictEqual(response.updatedInput, current)) {
      await ctx.gate.recordAnswer?.({ call: gateCall, decision, approved: true, remember: response.remember, rule: response.rule, userId: response.userId, channel: response.channel }, ctx.gateContext);
      const auto = automaticPolicy(response.userId);
      const reason = auto ? `approved automatically (--auto ${auto})` : 'approved by the user';
      const approved: PermissionDecision = { behavior: 'allow', reason, source: 'user' };
      return { allowed: true, input: current, decision: approved, answeredBy: response.userId, ...(response.remember ? { remember: response.remember } : {}), ...(current !== input ? { note: modelTexts.editedInput(current) } : {}) };
    }
    // The person edited the input: it must validate and pass the deny and ask rules again.
    const edited = tool.inputSchema.safeParse(response.updatedInput);
    if (!edited.success) {
      const d: PermissionDecision = { behavior: 'deny', reason: `the edited input is invalid: ${formatZodError(edited.error)}`, source: 'user' };
      return { allowed: false, decision: d, modelText: modelTexts.invalidInput(call.name, formatZodError(edited.error)), answeredBy: response.userId };
    }
    const recheck = await decide(ctx, toGateCall(ctx, call, tool, edited.data));
    if (recheck.behavior === 'deny') {
      return { allowed: false, decision: recheck, modelText: modelTexts.deniedByGate(call.name, edited.data, recheck.reason, recheck.rule), answeredBy: response.userId };
    }
    const rewritten = recheck.updatedInput !== undefined && !isDeepStrictEqual(recheck.updatedInput, edited.data);
    if (!rewritten) {
      await ctx.gate.recordAnswer?.({ call: toGateCall(ctx, call, tool, edited.data), decision, approved: true, remember: 'once', userId: response.userId, channel: response.channel, updatedInput: edited.data }, ctx.gateContext);
      const approved: PermissionDecision = { behavior: 'allow', reason: 'approved by the user with an edited input', source: 'user' };
      return { allowed: true, input: edited.data, decision: approved, answeredBy: response.userId, note: modelTexts.editedInput(edited.data) };
    }
    // A hook changed what the person approved: show them what would really run.
    current = recheck.updatedInput;
    decision = { ...recheck, behavior: 'ask', reason: `the input was changed after approval; approve the new input. ${recheck.reason}` };
  }
  const d: PermissionDecision = { behavior: 'deny', reason: 'the input kept changing after approval', source: 'hook' };
  return { allowed: false, decision: d, modelText: modelTexts.deniedByGate(call.name, current, d.reason) };
}

function toGateCall(ctx: RunContext, call: ToolCall, tool: Tool, input: unknown): GateCall {
  return { toolCallId: call.id, toolName: call.name, input, tool: ctx.registry.gateInfoOf(tool.name)! };
}

/**
 * A gate that throws never allows: the error becomes a deny. A gate that answers with a plain value
 * is not awaited (no promise, no extra tick); a promise is awaited as before.
 */
/** The gate's decision; a gate that throws denies (fail closed). */
export function decide(ctx: RunContext, gateCall: GateCall): PermissionDecision | Promise<PermissionDecision> {
  try {
    const decision = ctx.gate.decide(gateCall, ctx.gateContext);
    return isThenable(decision) ? Promise.resolve(decision).then(undefined, gateFailed) : decision;
  } catch (error) {
    return gateFailed(error);
  }
}

function gateFailed(error: unknown): PermissionDecision {
  return { behavior: 'deny', reason: `the permission check failed (${(error as Error).message}), so the call is not allowed`, source: 'default' };
}

/** A promise or any other thenable (what `await` would wait for). */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** The `permission.decided` data, keys in this order: toolCallId, toolName, behavior, reason, rule?, ruleSource?, source. */
export function decisionData(call: ToolCall, behavior: PermissionDecision['behavior'], decision: PermissionDecision): PermissionDecidedData {
  if (!decision.rule && !decision.ruleSource) return { toolCallId: call.id, toolName: call.name, behavior, reason: decision.reason, source: decision.source };
  return {
    toolCallId: call.id,
    toolName: call.name,
    behavior,
    reason: decision.reason,
    ...(decision.rule ? { rule: decision.rule } : {}),
    ...(decision.ruleSource ? { ruleSource: decision.ruleSource } : {}),
    source: decision.source,
  };
}

/**
 * The policy of an automatic responder (`--auto allow` answers as `auto:allow`), so a decision
 * says truthfully that no person made it; undefined for a person's answer.
 */
function automaticPolicy(userId: string | undefined): string | undefined {
  return userId?.startsWith('auto:') ? userId.slice('auto:'.length) : undefined;
}
