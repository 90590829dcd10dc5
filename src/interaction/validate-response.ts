import { isoNow } from './iso-time.js';
import { formatZodError, firstZodField } from '../errors/format-zod-error.js';
import { InvalidResponseError } from './errors.js';
import type { CombinedItem, InteractionRequest } from './request.js';
import { interactionResponseSchema, type InteractionResponse, type ItemResponse } from './response.js';

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
  const parsed = interactionResponseSchema.safeParse(raw);
  if (!parsed.success) {
    throw new InvalidResponseError(request.id, `Invalid response: ${formatZodError(parsed.error)}`, firstZodField(parsed.error));
  }
  const response = parsed.data;
  if (response.requestId !== request.id) {
    throw new InvalidResponseError(request.id, `Response is for "${response.requestId}", not "${request.id}".`, 'requestId');
  }
  checkAnswer(request.id, request, response, '');
  return { ...response, respondedAt: response.respondedAt ?? isoNow() };
}

function checkAnswer(id: string, body: Body, answer: Answer, prefix: string): void {
  const field = (name: string) => prefix + name;
  if (answer.kind !== body.kind) {
    throw new InvalidResponseError(id, `Expected a "${body.kind}" response, got "${answer.kind}".`, field('kind'));
  }
  switch (body.kind) {
    case 'input': {
      if (typeof answer.text !== 'string') throw new InvalidResponseError(id, 'An input response needs "text".', field('text'));
      if (body.required && answer.text.trim() === '') throw new InvalidResponseError(id, 'This input is required; "text" is empty.', field('text'));
      return;
    }
    case 'select': {
      const selected = answer.selected;
      if (!selected || selected.length === 0) throw new InvalidResponseError(id, 'A select response needs at least one value in "selected".', field('selected'));
      if (!body.multiple && selected.length > 1) throw new InvalidResponseError(id, 'This select takes one value.', field('selected'));
      const known = new Set(body.options.map((o) => o.value));
      const unknown = selected.find((v) => !known.has(v));
      if (unknown !== undefined) throw new InvalidResponseError(id, `"${unknown}" is not one of the options (${[...known].join(', ')}).`, field('selected'));
      return;
    }
    case 'confirm': {
      if (typeof answer.confirmed !== 'boolean') throw new InvalidResponseError(id, 'A confirm response needs "confirmed": true or false.', field('confirmed'));
      return;
    }
    case 'questions': {
      const answers = answer.answers;
      if (!answers) throw new InvalidResponseError(id, 'A questions response needs "answers", keyed by question text.', field('answers'));
      const asked = new Set(body.questions.map((q) => q.question));
      for (const key of Object.keys(answers)) {
        if (!asked.has(key)) throw new InvalidResponseError(id, `"${key}" is not one of the questions asked.`, field(`answers.${key}`));
      }
      for (const q of body.questions) {
        const value = answers[q.question];
        const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
        if (values.length === 0 || values.some((v) => v.trim() === '')) {
          throw new InvalidResponseError(id, `The question "${q.question}" has no answer.`, field(`answers.${q.question}`));
        }
        if (!q.multiSelect && values.length > 1) {
          throw new InvalidResponseError(id, `The question "${q.question}" takes one answer.`, field(`answers.${q.question}`));
        }
      }
      return;
    }
    case 'combined': {
      const responses = answer.responses;
      if (!responses) throw new InvalidResponseError(id, 'A combined response needs "responses", keyed by item key.', field('responses'));
      const keys = new Set(body.items.map((i) => i.key));
      for (const key of Object.keys(responses)) {
        if (!keys.has(key)) throw new InvalidResponseError(id, `"${key}" is not an item of this request.`, field(`responses.${key}`));
      }
      for (const item of body.items) {
        const itemAnswer = responses[item.key];
        if (!itemAnswer) throw new InvalidResponseError(id, `The item "${item.key}" has no response.`, field(`responses.${item.key}`));
        checkAnswer(id, item, itemAnswer, `responses.${item.key}.`);
      }
      return;
    }
  }
}
