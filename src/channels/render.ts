import { createHash } from 'node:crypto';
import { reasonLine } from '../interaction/index.js';
import { askContextLine, type AskContext } from '../runtime/ask-context.js';
import type { InteractionRecord } from '../store/index.js';
import type { ApprovalOption, ChannelLimits, RenderedApproval } from './adapter.js';

/** Crockford-style base32, lower case: no i, l, o, u, so an id reads and types well on a phone. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
/** The short id people see; matching accepts any unique prefix of the longer form. */
export const SHORT_ID_LENGTH = 6;
const MATCH_ID_LENGTH = 12;

/**
 * A short id for an interaction, derived from its id (so it is the same after a restart and on
 * every instance): interaction ids share their run's long prefix, so a prefix of the id itself
 * would not tell two asks apart.
 */
export function shortIdOf(interactionId: string, length = MATCH_ID_LENGTH): string {
  const digest = createHash('sha256').update(interactionId).digest();
  let out = '';
  for (let i = 0; out.length < length; i++) out += ALPHABET[digest[i]! & 31];
  return out;
}

const MAX_INPUT_VIEW = 700;
/** The title and the gate's reason can quote the whole input (a 60 kB command): a line each, not a page. */
const MAX_LINE = 300;

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** The input as a person judges it: the command for Bash, the diff for an edit, else compact JSON. */
export function inputView(toolName: string | undefined, input: unknown, metadata: Record<string, unknown> | undefined): string | undefined {
  const diff = typeof metadata?.['diff'] === 'string' ? metadata['diff'] : undefined;
  if (diff) return truncate(diff, MAX_INPUT_VIEW);
  if (input === undefined) return undefined;
  const fields = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  if (toolName === 'Bash' && typeof fields['command'] === 'string') return truncate(fields['command'], MAX_INPUT_VIEW);
  if (typeof fields['file_path'] === 'string' && Object.keys(fields).length === 1) return fields['file_path'];
  let json: string;
  try {
    json = JSON.stringify(input);
  } catch {
    json = String(input);
  }
  return truncate(json, MAX_INPUT_VIEW);
}

function riskOf(metadata: Record<string, unknown> | undefined): RenderedApproval['risk'] {
  const risk = metadata?.['risk'];
  return risk === 'HIGH' ? 'high' : risk === 'MEDIUM' ? 'medium' : risk === 'LOW' ? 'low' : undefined;
}

function clock(iso: string): string {
  return `${iso.slice(11, 16)} UTC`;
}

/**
 * The chat form of an interaction, or undefined for kinds a chat does not show (combined). With its
 * context, the message says which task, folder and asker it is for (a chat may hold several runs).
 */
export function renderInteraction(record: InteractionRecord, limits: ChannelLimits = {}, context?: AskContext): { text: string; approval: RenderedApproval } | undefined {
  const request = record.request;
  const about = context ? [truncate(askContextLine(context), MAX_LINE)] : [];
  const withContext = context ? { context } : {};
  const shortId = shortIdOf(record.id, SHORT_ID_LENGTH);
  const expiresAt = record.expiresAt ?? request.expiresAt;
  const expiry = expiresAt ? `\nExpires at ${clock(expiresAt)}.` : '';
  if (request.kind === 'confirm') {
    const risk = riskOf(request.metadata);
    const view = inputView(request.toolName, request.input, request.metadata);
    // A HIGH-risk ask gets no primary (green) button: nothing should invite a quick yes.
    const options: ApprovalOption[] = [
      { value: 'once', label: 'Approve once', command: `/approve ${shortId} once`, ...(risk === 'high' ? {} : { style: 'primary' as const }) },
      { value: 'always', label: 'Always (this chat)', command: `/approve ${shortId} always` },
      { value: 'deny', label: 'Deny', command: `/approve ${shortId} deny`, style: 'danger' },
    ];
    const approval: RenderedApproval = {
      interactionId: record.id,
      shortId,
      kind: 'approval',
      ...(request.toolName ? { toolName: request.toolName } : {}),
      title: truncate(request.title, MAX_LINE),
      ...(view ? { inputView: view } : {}),
      ...(risk ? { risk } : {}),
      ...(expiresAt ? { expiresAt } : {}),
      ...withContext,
      options: fit(options, limits),
    };
    const lines = [
      `🔐 Approval [${shortId}] ${request.toolName ?? ''}${risk ? ` — risk ${risk.toUpperCase()}` : ''}`.trimEnd(),
      ...about,
      truncate(request.title, MAX_LINE),
      ...(view ? [view] : []),
      ...(request.reason ? [`Why: ${truncate(reasonLine(request), MAX_LINE)}`] : []),
      `Reply /approve ${shortId} once|always|deny [reason], or yes/no when it is the only one waiting.${expiry}`,
    ];
    return { text: lines.join('\n'), approval };
  }
  if (request.kind === 'questions' && request.questions.length === 1) {
    const q = request.questions[0]!;
    const options = q.options.map((o, i) => ({ value: String(i + 1), label: o.label, command: `/answer ${shortId} ${i + 1}` }));
    const lines = [`❓ [${shortId}] ${q.question}`, ...about, ...q.options.map((o, i) => `${i + 1}. ${o.label}${o.description ? ` — ${o.description}` : ''}`), `Tap an option, reply /answer ${shortId} <number>, or type your own answer.${expiry}`];
    return { text: lines.join('\n'), approval: { interactionId: record.id, shortId, kind: 'question', title: q.question, ...(expiresAt ? { expiresAt } : {}), ...withContext, options: fit(options, limits) } };
  }
  if (request.kind === 'select') {
    const options = request.options.map((o, i) => ({ value: String(i + 1), label: o.label, command: `/answer ${shortId} ${i + 1}` }));
    const lines = [`❓ [${shortId}] ${request.title}`, ...about, ...request.options.map((o, i) => `${i + 1}. ${o.label}`), `Tap an option or reply /answer ${shortId} <number>.${expiry}`];
    return { text: lines.join('\n'), approval: { interactionId: record.id, shortId, kind: 'question', title: request.title, ...(expiresAt ? { expiresAt } : {}), ...withContext, options: fit(options, limits) } };
  }
  if (request.kind === 'input') {
    const lines = [`✏️ [${shortId}] ${request.title}`, ...about, ...(request.description ? [request.description] : []), `Type your answer as the next message.${expiry}`];
    return { text: lines.join('\n'), approval: { interactionId: record.id, shortId, kind: 'input', title: request.title, ...(expiresAt ? { expiresAt } : {}), ...withContext, options: [] } };
  }
  return undefined;
}

/** Keeps to the platform's button count and label length; the typed commands in the text still cover every option. */
function fit(options: ApprovalOption[], limits: ChannelLimits): ApprovalOption[] {
  const max = limits.maxButtonLabel;
  const shown = limits.maxButtons !== undefined ? options.slice(0, limits.maxButtons) : options;
  return max ? shown.map((o) => ({ ...o, label: truncate(o.label, max) })) : shown;
}
