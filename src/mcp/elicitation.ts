import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { CombinedItem, InteractionDraft, InteractionOutcome, InteractionResponse, ItemResponse } from '../interaction/index.js';
import type { ElicitParams } from './connection.js';

/** The key of the accept/decline item of a form elicitation (field names never start with `__`: it is reserved here). */
export const DECISION_KEY = '__decision';
/** The value an optional select offers for "leave it empty". */
const NO_ANSWER = '';
/** A person whose answers do not fit the requested schema is asked again this many times, then the elicitation is cancelled. */
export const ELICIT_ATTEMPTS = 3;

type Property = Extract<ElicitParams, { requestedSchema: unknown }>['requestedSchema']['properties'][string];
type Content = NonNullable<ElicitResult['content']>;

interface Field {
  key: string;
  property: Property;
  required: boolean;
}

function fieldsOf(params: Extract<ElicitParams, { requestedSchema: unknown }>): Field[] {
  const required = new Set(params.requestedSchema.required ?? []);
  return Object.entries(params.requestedSchema.properties).map(([key, property]) => ({ key, property, required: required.has(key) }));
}

function choices(property: Property): { value: string; label: string }[] | undefined {
  const p = property as Record<string, unknown>;
  if (Array.isArray(p.enum)) {
    const names = Array.isArray(p.enumNames) ? (p.enumNames as string[]) : [];
    return (p.enum as string[]).map((value, i) => ({ value, label: names[i] ?? value }));
  }
  if (Array.isArray(p.oneOf)) return (p.oneOf as { const: string; title: string }[]).map((o) => ({ value: o.const, label: o.title }));
  const items = p.items as Record<string, unknown> | undefined;
  if (items && Array.isArray(items.enum)) return (items.enum as string[]).map((value) => ({ value, label: value }));
  if (items && Array.isArray(items.anyOf)) return (items.anyOf as { const: string; title: string }[]).map((o) => ({ value: o.const, label: o.title }));
  return undefined;
}

function hint(field: Field): string {
  const p = field.property as Record<string, unknown>;
  const parts = [p.description as string | undefined, p.type === 'number' || p.type === 'integer' ? `a${p.type === 'integer' ? 'n integer' : ' number'}${p.minimum !== undefined ? ` ≥ ${p.minimum}` : ''}${p.maximum !== undefined ? ` ≤ ${p.maximum}` : ''}` : undefined, p.format ? `format: ${p.format}` : undefined, field.required ? 'required' : 'optional'];
  return parts.filter(Boolean).join('; ');
}

/** One requested field as an item of a combined interaction. */
function itemOf(field: Field): CombinedItem {
  const p = field.property as Record<string, unknown>;
  const title = `${(p.title as string | undefined) ?? field.key} (${hint(field)})`;
  // A field the server does not require may be left out of an answer.
  const optional = field.required ? {} : { optional: true };
  const options = choices(field.property);
  if (options) {
    const multiple = p.type === 'array';
    // A select always needs a value; an optional one offers "no answer".
    const all = field.required ? options : [...options, { value: NO_ANSWER, label: '(no answer)' }];
    const known = new Set(options.map((o) => o.value));
    const defaults = (Array.isArray(p.default) ? p.default : p.default === undefined ? [] : [p.default]).filter((v): v is string => typeof v === 'string' && known.has(v));
    return { key: field.key, title, kind: 'select', options: all, ...optional, ...(multiple ? { multiple: true } : {}), ...(defaults.length && (multiple || defaults.length === 1) ? { defaultSelected: defaults } : {}) };
  }
  if (p.type === 'boolean') return { key: field.key, title, kind: 'confirm', confirmText: 'Yes', cancelText: 'No', ...optional, ...(typeof p.default === 'boolean' ? { defaultConfirmed: p.default } : {}) };
  const fallback = p.default === undefined ? undefined : String(p.default);
  // Not `required` here: a person who declines need not fill it in. Required-ness is checked on accept.
  return { key: field.key, title, kind: 'input', ...optional, ...(fallback !== undefined ? { defaultValue: fallback } : {}) };
}

/**
 * The Sage interaction for a server's `elicitation/create`: form mode becomes a combined request
 * (each requested field an input, select or confirm item, and a last item to accept or decline);
 * URL mode a confirm naming the URL. `problem` explains a previous answer that did not validate.
 */
export function elicitationDraft(server: string, params: ElicitParams, call: { toolCallId: string; toolName: string }, problem?: string): InteractionDraft {
  const common = { toolCallId: call.toolCallId, toolName: call.toolName, metadata: { mcp: { server, elicitation: params.mode ?? 'form' } } };
  if (params.mode === 'url') {
    return {
      ...common,
      kind: 'confirm',
      title: `MCP server ${server} asks you to open a page: ${oneLine(params.url, 300)}`,
      description: `${params.message}\n\nOpen: ${params.url}\n(Sage does not open it for you; nothing you enter there passes through the agent.)`,
      confirmText: 'Accept (I will open it)',
      cancelText: 'Decline',
    };
  }
  const fields = fieldsOf(params);
  const description = `${params.message}${problem ? `\n\nYour previous answer was not accepted: ${problem}` : ''}`;
  // The server's message is the question itself: in the title, which every responder shows (a terminal shows no description for a form).
  const title = `MCP server ${server} asks: ${oneLine(params.message, 300)}${problem ? ` (asked again: ${oneLine(problem, 200)})` : ''}`;
  if (fields.length === 0) return { ...common, kind: 'confirm', title, description, confirmText: 'Accept', cancelText: 'Decline' };
  return {
    ...common,
    kind: 'combined',
    title,
    description,
    items: [...fields.map(itemOf), { key: DECISION_KEY, title: `Send these answers to ${server}?`, kind: 'confirm', confirmText: 'Accept', cancelText: 'Decline' }],
  };
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * What goes back to the server for an interaction's outcome: accept with content validated against
 * the requested schema, decline, or cancel (expired, cancelled). `{ problem }` when an accepted
 * answer does not fit the schema (the caller asks again).
 */
export function elicitationResult(params: ElicitParams, outcome: InteractionOutcome): ElicitResult | { problem: string } {
  if (outcome.status !== 'answered') return { action: 'cancel' };
  const response = outcome.response;
  if (params.mode === 'url') return { action: response.confirmed ? 'accept' : 'decline' };
  const fields = fieldsOf(params);
  if (fields.length === 0) return response.confirmed ? { action: 'accept', content: {} } : { action: 'decline' };
  const decision = response.responses?.[DECISION_KEY]?.confirmed;
  if (decision !== true) return { action: 'decline' };
  const content: Content = {};
  const problems: string[] = [];
  for (const field of fields) {
    const answer = itemAnswer(response, field.key);
    const value = valueOf(field, answer);
    if (typeof value === 'object' && value !== null && 'problem' in value) problems.push(`${field.key}: ${value.problem}`);
    else if (value !== undefined) content[field.key] = value;
    else if (field.required) problems.push(`${field.key}: required`);
  }
  return problems.length ? { problem: problems.join('; ') } : { action: 'accept', content };
}

function itemAnswer(response: InteractionResponse, key: string): ItemResponse | undefined {
  return response.responses?.[key];
}

type Value = string | number | boolean | string[] | undefined | { problem: string };

/** One field's answer checked against its schema (type, enum, length, range, format, item count). */
function valueOf(field: Field, answer: ItemResponse | undefined): Value {
  const p = field.property as Record<string, unknown>;
  if (!answer) return undefined;
  const options = choices(field.property);
  if (options) {
    const picked = (answer.selected ?? []).filter((v) => v !== NO_ANSWER);
    const known = new Set(options.map((o) => o.value));
    const unknown = picked.find((v) => !known.has(v));
    if (unknown !== undefined) return { problem: `"${unknown}" is not one of ${[...known].join(', ')}` };
    if (p.type === 'array') {
      if (picked.length === 0 && !field.required) return undefined;
      if (typeof p.minItems === 'number' && picked.length < p.minItems) return { problem: `choose at least ${p.minItems}` };
      if (typeof p.maxItems === 'number' && picked.length > p.maxItems) return { problem: `choose at most ${p.maxItems}` };
      return picked;
    }
    if (picked.length > 1) return { problem: 'choose one' };
    return picked[0];
  }
  if (p.type === 'boolean') return answer.confirmed;
  const text = (answer.text ?? '').trim();
  if (text === '') return undefined;
  if (p.type === 'number' || p.type === 'integer') {
    const n = Number(text);
    if (!Number.isFinite(n)) return { problem: `"${text}" is not a number` };
    if (p.type === 'integer' && !Number.isInteger(n)) return { problem: `"${text}" is not an integer` };
    if (typeof p.minimum === 'number' && n < p.minimum) return { problem: `must be ≥ ${p.minimum}` };
    if (typeof p.maximum === 'number' && n > p.maximum) return { problem: `must be ≤ ${p.maximum}` };
    return n;
  }
  if (typeof p.minLength === 'number' && text.length < p.minLength) return { problem: `at least ${p.minLength} characters` };
  if (typeof p.maxLength === 'number' && text.length > p.maxLength) return { problem: `at most ${p.maxLength} characters` };
  const format = p.format as string | undefined;
  if (format === 'email' && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(text)) return { problem: `"${text}" is not an email address` };
  if (format === 'uri' && !URL.canParse(text)) return { problem: `"${text}" is not a URI` };
  if (format === 'date' && !/^\d{4}-\d{2}-\d{2}$/.test(text)) return { problem: `"${text}" is not a date (YYYY-MM-DD)` };
  if (format === 'date-time' && Number.isNaN(Date.parse(text))) return { problem: `"${text}" is not a date-time` };
  return text;
}
