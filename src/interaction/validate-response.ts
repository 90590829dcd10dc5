import { isoNow } from './iso-time.js';
import { formatZodError, firstZodField } from '../errors/format-zod-error.js';
import { InvalidResponseError } from './errors.js';
import type { CombinedItem, InteractionRequest } from './request.js';
import { interactionResponseSchema, rememberSchema, type InteractionResponse, type ItemResponse } from './response.js';

type Body = InteractionRequest | CombinedItem;
type Answer = Pick<ItemResponse, 'text' | 'selected' | 'confirmed' | 'answers'> & {
  kind: ItemResponse['kind'] | 'combined';
  responses?: Record<string, ItemResponse>;
};

/**
 * Parses an untrusted response and checks it against its request. Throws InvalidResponseError
 * naming the field at fault; returns the normalised response (with `respondedAt`).
 */
export function validateResponse(request: InteractionRequest, raw: unknown): InteractionResponse {
  let response = parseSimple(raw);
  if (response === undefined) {
    const parsed = interactionResponseSchema.safeParse(raw);
    if (!parsed.success) {
      throw new InvalidResponseError(request.id, `Invalid response: ${formatZodError(parsed.error)}`, firstZodField(parsed.error));
    }
    response = parsed.data;
  }
  if (response.requestId !== request.id) {
    throw new InvalidResponseError(request.id, `Response is for "${response.requestId}", not "${request.id}".`, 'requestId');
  }
  checkAnswer(request.id, request, response, '');
  // The parse made this object: stamped in place (a key present keeps its place, as in a copy).
  if (response.respondedAt === undefined) response.respondedAt = isoNow();
  return response as InteractionResponse;
}

type Parsed = Omit<InteractionResponse, 'respondedAt'> & { respondedAt?: string };

const KINDS: ReadonlySet<unknown> = new Set(interactionResponseSchema.shape.kind.options);
const REMEMBER: ReadonlySet<unknown> = new Set(rememberSchema.options);
/** The fields `parseSimple` checks itself; any other key (or none of these) goes to zod. */
const SIMPLE_KEYS: ReadonlySet<string> = new Set(['requestId', 'kind', 'text', 'confirmed', 'updatedInput', 'message', 'remember', 'rule', 'userId', 'channel', 'respondedAt']);

/**
 * What `interactionResponseSchema` makes of the common answer — a plain object of these simple
 * fields, all valid — without running zod, which was a visible part of every answer in a profile of an
 * approval cycle (bench/README.md). Anything else (another key, a wrong type, an array or a record field,
 * an object that is not plain) returns undefined and zod decides, with its errors. The result is
 * zod's: a new object with the schema's keys in the schema's order, each present key copied (an
 * optional key present as undefined stays present).
 */
function parseSimple(raw: unknown): Parsed | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const proto = Object.getPrototypeOf(raw) as unknown;
  if (proto !== Object.prototype && proto !== null) return undefined;
  const input = raw as Record<string, unknown>;
  for (const key in input) if (!SIMPLE_KEYS.has(key)) return undefined;
  const { requestId, kind } = input;
  if (typeof requestId !== 'string' || requestId.length === 0 || !KINDS.has(kind)) return undefined;
  const out: Record<string, unknown> = { requestId, kind };
  // In the schema's order: requestId, kind, text, (selected), confirmed, (answers, responses), updatedInput,
  // message, remember, rule, userId, channel, respondedAt.
  if ('text' in input && !optionalString(input.text, out, 'text')) return undefined;
  if ('confirmed' in input) {
    const confirmed = input.confirmed;
    if (confirmed !== undefined && typeof confirmed !== 'boolean') return undefined;
    out.confirmed = confirmed;
  }
  if ('updatedInput' in input) out.updatedInput = input.updatedInput;
  if ('message' in input && !optionalString(input.message, out, 'message', 10_000)) return undefined;
  if ('remember' in input) {
    const remember = input.remember;
    if (remember !== undefined && !REMEMBER.has(remember)) return undefined;
    out.remember = remember;
  }
  if ('rule' in input && !optionalString(input.rule, out, 'rule')) return undefined;
  if ('userId' in input && !optionalString(input.userId, out, 'userId')) return undefined;
  if ('channel' in input && !optionalString(input.channel, out, 'channel', 128)) return undefined;
  if ('respondedAt' in input && !optionalString(input.respondedAt, out, 'respondedAt')) return undefined;
  return out as Parsed;
}

/** An optional string field (at most `max` UTF-16 units, as zod counts), copied to `out`; false when invalid. */
function optionalString(value: unknown, out: Record<string, unknown>, key: string, max?: number): boolean {
  if (value !== undefined && (typeof value !== 'string' || (max !== undefined && value.length > max))) return false;
  out[key] = value;
  return true;
}

function checkAnswer(id: string, body: Body, answer: Answer, prefix: string): void {
  if (answer.kind !== body.kind) {
    throw new InvalidResponseError(id, `Expected a "${body.kind}" response, got "${answer.kind}".`, prefix + 'kind');
  }
  switch (body.kind) {
    case 'input': {
      if (typeof answer.text !== 'string') throw new InvalidResponseError(id, 'An input response needs "text".', prefix + 'text');
      if (body.required && answer.text.trim() === '') throw new InvalidResponseError(id, 'This input is required; "text" is empty.', prefix + 'text');
      return;
    }
    case 'select': {
      const selected = answer.selected;
      if (!selected || selected.length === 0) throw new InvalidResponseError(id, 'A select response needs at least one value in "selected".', prefix + 'selected');
      if (!body.multiple && selected.length > 1) throw new InvalidResponseError(id, 'This select takes one value.', prefix + 'selected');
      const known = new Set(body.options.map((o) => o.value));
      const unknown = selected.find((v) => !known.has(v));
      if (unknown !== undefined) throw new InvalidResponseError(id, `"${unknown}" is not one of the options (${[...known].join(', ')}).`, prefix + 'selected');
      return;
    }
    case 'confirm': {
      if (typeof answer.confirmed !== 'boolean') throw new InvalidResponseError(id, 'A confirm response needs "confirmed": true or false.', prefix + 'confirmed');
      return;
    }
    case 'questions': {
      const answers = answer.answers;
      if (!answers) throw new InvalidResponseError(id, 'A questions response needs "answers", keyed by question text.', prefix + 'answers');
      const asked = new Set(body.questions.map((q) => q.question));
      for (const key of Object.keys(answers)) {
        if (!asked.has(key)) throw new InvalidResponseError(id, `"${key}" is not one of the questions asked.`, prefix + `answers.${key}`);
      }
      for (const q of body.questions) {
        const value = answers[q.question];
        const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
        if (values.length === 0 || values.some((v) => v.trim() === '')) {
          throw new InvalidResponseError(id, `The question "${q.question}" has no answer.`, prefix + `answers.${q.question}`);
        }
        if (!q.multiSelect && values.length > 1) {
          throw new InvalidResponseError(id, `The question "${q.question}" takes one answer.`, prefix + `answers.${q.question}`);
        }
      }
      return;
    }
    case 'combined': {
      const responses = answer.responses;
      if (!responses) throw new InvalidResponseError(id, 'A combined response needs "responses", keyed by item key.', prefix + 'responses');
      const keys = new Set(body.items.map((i) => i.key));
      for (const key of Object.keys(responses)) {
        if (!keys.has(key)) throw new InvalidResponseError(id, `"${key}" is not an item of this request.`, prefix + `responses.${key}`);
      }
      for (const item of body.items) {
        const itemAnswer = responses[item.key];
        if (!itemAnswer && item.optional) continue;
        if (!itemAnswer) throw new InvalidResponseError(id, `The item "${item.key}" has no response.`, prefix + `responses.${item.key}`);
        checkAnswer(id, item, itemAnswer, `responses.${item.key}.`);
      }
      return;
    }
  }
}
