import { createRequire } from 'node:module';
import { z } from 'zod';

/** What a PreToolUse hook sees. */
export interface PreToolUseEvent {
  hookEventName: 'PreToolUse';
  toolName: string;
  toolCallId: string;
  input: unknown;
  sessionId: string;
  runId: string;
  userId: string;
  cwd: string;
}

export interface PostToolUseEvent extends Omit<PreToolUseEvent, 'hookEventName'> {
  hookEventName: 'PostToolUse';
  result: { content: string; isError: boolean };
}

/** A hook's answer; returning nothing means "no opinion". */
export interface HookVerdict {
  decision?: 'allow' | 'deny' | 'ask';
  reason?: string;
  /** A rewritten input; the gate checks it again from the start. */
  updatedInput?: unknown;
}

export type PreToolUseFunction = (event: PreToolUseEvent, signal: AbortSignal) => HookVerdict | undefined | void | Promise<HookVerdict | undefined | void>;
export type PostToolUseFunction = (event: PostToolUseEvent, signal: AbortSignal) => void | Promise<void>;

/** A hook: a function, or a shell command that reads the event as JSON on stdin and answers JSON. */
export type HookDefinition<F> =
  | { name?: string; matcher?: string; run: F; timeoutMs?: number }
  | { name?: string; matcher?: string; command: string; timeoutMs?: number };

export interface HookOutcome extends HookVerdict {
  /** The hook failed or timed out; this never becomes an allow. */
  failed?: string;
  hook?: string;
}

export const DEFAULT_HOOK_TIMEOUT_MS = 60_000;

export function hookMatches(matcher: string | undefined, toolName: string): boolean {
  if (matcher === undefined || matcher === '' || matcher === '*') return true;
  try {
    return new RegExp(`^(?:${matcher})$`).test(toolName);
  } catch {
    return matcher === toolName;
  }
}

const commandAnswerSchema = z.object({
  hookSpecificOutput: z.object({
    permissionDecision: z.enum(['allow', 'deny', 'ask']).optional(),
    permissionDecisionReason: z.string().optional(),
    updatedInput: z.unknown().optional(),
  }).optional(),
  decision: z.enum(['allow', 'deny', 'ask', 'approve', 'block']).optional(),
  reason: z.string().optional(),
  updatedInput: z.unknown().optional(),
});

/** Runs the PreToolUse hooks in order; a deny stops at once, a rewrite is passed to the next hook. */
export async function runPreToolUseHooks(hooks: readonly HookDefinition<PreToolUseFunction>[], event: PreToolUseEvent, signal?: AbortSignal): Promise<HookOutcome> {
  const outcome: HookOutcome = {};
  let current = event;
  for (const hook of hooks) {
    if (!hookMatches(hook.matcher, event.toolName)) continue;
    const name = hook.name ?? ('command' in hook ? hook.command : 'function hook');
    const timeoutMs = hook.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS;
    let verdict: HookVerdict | undefined;
    try {
      verdict = 'command' in hook ? await runCommandHook(hook.command, current, timeoutMs, signal) : await runFunctionHook(hook.run, current, timeoutMs, signal);
    } catch (error) {
      return { ...outcome, failed: `the hook ${name} failed: ${error instanceof Error ? error.message : String(error)}`, hook: name };
    }
    if (!verdict) continue;
    if (verdict.updatedInput !== undefined) {
      outcome.updatedInput = verdict.updatedInput;
      current = { ...current, input: verdict.updatedInput };
    }
    if (verdict.decision === 'deny') return { ...outcome, decision: 'deny', reason: verdict.reason, hook: name };
    if (verdict.decision === 'ask' || (verdict.decision === 'allow' && outcome.decision !== 'ask')) {
      outcome.decision = verdict.decision;
      outcome.reason = verdict.reason;
      outcome.hook = name;
    }
  }
  return outcome;
}

async function runFunctionHook(run: PreToolUseFunction, event: PreToolUseEvent, timeoutMs: number, signal?: AbortSignal): Promise<HookVerdict | undefined> {
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s`));
      }, timeoutMs);
    });
    return (await Promise.race([Promise.resolve(run(event, controller.signal)), timeout])) ?? undefined;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** Claude Code's protocol: JSON on stdin; exit 2 blocks (stderr is the reason); exit 0 may print a JSON answer. */
export function runCommandHook(command: string, event: PreToolUseEvent | PostToolUseEvent, timeoutMs: number, signal?: AbortSignal): Promise<HookVerdict | undefined> {
  return new Promise((resolve, reject) => {
    // Loaded at the first hook, not with the module: every `sage run` loads this, few have hooks.
    const { spawn } = createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');
    const child = spawn('/bin/sh', ['-c', command], { cwd: event.cwd, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {}
    };
    const onAbort = () => finish(() => { kill(); reject(new Error('cancelled')); });
    const timer = setTimeout(() => finish(() => { kill(); reject(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s`)); }), timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString('utf8'); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString('utf8'); });
    child.on('error', (error) => finish(() => reject(error)));
    child.on('close', (code) => finish(() => {
      if (code === 2) return resolve({ decision: 'deny', reason: stderr.trim() || 'blocked by a hook' });
      if (code !== 0) return reject(new Error(`exited with code ${code}${stderr.trim() ? `: ${stderr.trim()}` : ''}`));
      resolve(parseAnswer(stdout));
    }));
    child.stdin.on('error', () => {});
    child.stdin.end(JSON.stringify(toWire(event)));
  });
}

function toWire(event: PreToolUseEvent | PostToolUseEvent): Record<string, unknown> {
  return {
    hook_event_name: event.hookEventName, tool_name: event.toolName, tool_input: event.input, tool_use_id: event.toolCallId,
    session_id: event.sessionId, run_id: event.runId, user_id: event.userId, cwd: event.cwd,
    ...('result' in event ? { tool_response: event.result } : {}),
  };
}

function parseAnswer(stdout: string): HookVerdict | undefined {
  const text = stdout.trim();
  if (!text.startsWith('{')) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error('printed text that is not valid JSON');
  }
  const parsed = commandAnswerSchema.safeParse(json);
  if (!parsed.success) throw new Error(`printed JSON that is not a hook answer: ${parsed.error.issues[0]?.message ?? ''}`);
  const specific = parsed.data.hookSpecificOutput;
  const legacy = parsed.data.decision === 'approve' ? 'allow' : parsed.data.decision === 'block' ? 'deny' : parsed.data.decision;
  return {
    decision: specific?.permissionDecision ?? legacy,
    reason: specific?.permissionDecisionReason ?? parsed.data.reason,
    updatedInput: specific?.updatedInput ?? parsed.data.updatedInput,
  };
}
