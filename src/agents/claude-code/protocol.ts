/**
 * The lines Claude Code writes on stdout in stream-json mode, read leniently: the protocol is only
 * semi-public and grows with every release, so unknown types, subtypes and fields are kept as
 * `other` (logged as they came), never an error.
 */

export interface ContentBlock {
  type?: string;
  text?: unknown;
  id?: unknown;
  name?: unknown;
  input?: unknown;
  tool_use_id?: unknown;
  content?: unknown;
  is_error?: unknown;
}

/** `control_request` subtype `hook_callback`: a hook Sage registered fired. */
export interface HookCallback {
  subtype: 'hook_callback';
  callback_id?: string;
  tool_use_id?: string;
  input?: { hook_event_name?: string; tool_name?: unknown; tool_input?: unknown; tool_use_id?: unknown };
}

/** `control_request` subtype `can_use_tool`: Claude Code asks the host for a permission. */
export interface CanUseTool {
  subtype: 'can_use_tool';
  tool_name: string;
  input?: Record<string, unknown>;
  tool_use_id?: string;
  permission_suggestions?: unknown;
  decision_reason?: string;
  blocked_path?: string;
}

export type ClaudeLine =
  | { kind: 'init'; sessionId: string }
  | { kind: 'assistant'; content: ContentBlock[]; usage?: { inputTokens: number; outputTokens: number } }
  | { kind: 'user'; content: ContentBlock[] }
  | { kind: 'result'; subtype: string; isError: boolean; result?: string; sessionId?: string; costUsd?: number }
  | { kind: 'control_request'; requestId: string; request: Record<string, unknown> }
  | { kind: 'control_response'; requestId: string; ok: boolean; error?: string }
  | { kind: 'control_cancel_request'; requestId: string }
  | { kind: 'other' };

const OTHER: ClaudeLine = { kind: 'other' };

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function blocks(message: unknown): ContentBlock[] {
  const content = record(message)?.content;
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? (content.filter((b) => record(b) !== undefined) as ContentBlock[]) : [];
}

export function parseLine(line: string): ClaudeLine {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return OTHER;
  }
  const msg = record(json);
  if (!msg) return OTHER;
  switch (msg.type) {
    case 'system':
      return msg.subtype === 'init' && typeof msg.session_id === 'string' ? { kind: 'init', sessionId: msg.session_id } : OTHER;
    case 'assistant': {
      // A subagent's messages (parent_tool_use_id set) are Claude Code's own business: logged, not the run's text.
      if (typeof msg.parent_tool_use_id === 'string') return OTHER;
      const usage = record(record(msg.message)?.usage);
      const input = typeof usage?.input_tokens === 'number' ? usage.input_tokens : undefined;
      const output = typeof usage?.output_tokens === 'number' ? usage.output_tokens : undefined;
      return { kind: 'assistant', content: blocks(msg.message), ...(input !== undefined && output !== undefined ? { usage: { inputTokens: input, outputTokens: output } } : {}) };
    }
    case 'user':
      return typeof msg.parent_tool_use_id === 'string' ? OTHER : { kind: 'user', content: blocks(msg.message) };
    case 'result':
      return {
        kind: 'result',
        subtype: typeof msg.subtype === 'string' ? msg.subtype : 'unknown',
        isError: msg.is_error === true,
        ...(typeof msg.result === 'string' ? { result: msg.result } : {}),
        ...(typeof msg.session_id === 'string' ? { sessionId: msg.session_id } : {}),
        ...(typeof msg.total_cost_usd === 'number' ? { costUsd: msg.total_cost_usd } : {}),
      };
    case 'control_request': {
      const request = record(msg.request);
      return typeof msg.request_id === 'string' && request ? { kind: 'control_request', requestId: msg.request_id, request } : OTHER;
    }
    case 'control_response': {
      const response = record(msg.response);
      if (!response || typeof response.request_id !== 'string') return OTHER;
      return { kind: 'control_response', requestId: response.request_id, ok: response.subtype === 'success', ...(typeof response.error === 'string' ? { error: response.error } : {}) };
    }
    case 'control_cancel_request':
      return typeof msg.request_id === 'string' ? { kind: 'control_cancel_request', requestId: msg.request_id } : OTHER;
    default:
      return OTHER;
  }
}
