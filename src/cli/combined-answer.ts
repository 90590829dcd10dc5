import type { CombinedItem, InteractionRequestOf } from '../interaction/index.js';
import { DECISION_KEY } from '../mcp/elicitation.js';
import { UsageError } from './usage-error.js';

type Combined = InteractionRequestOf<'combined'>;
type ItemAnswer = { kind: CombinedItem['kind']; text?: string; selected?: string[]; confirmed?: boolean };

const YES = new Set(['yes', 'y', 'true']);
const NO = new Set(['no', 'n', 'false']);

/** The fields a person answers (an MCP form's accept/decline item is answered by the flag itself). */
function fields(request: Combined): CombinedItem[] {
  return request.items.filter((i) => i.key !== DECISION_KEY && i.kind !== 'questions');
}

/** How to answer a combined request from the command line. */
export function howToAnswerCombined(request: Combined): string {
  const decline = request.items.some((i) => i.key === DECISION_KEY) ? ' or --deny' : '';
  return `--answer field=value… (fields: ${fields(request).map((i) => i.key).join(', ')})${decline}`;
}

/**
 * The response `--answer field=value…` (or `--deny`, for an MCP form) describes: each field by its
 * key; a select by value or label (repeated for several); a yes/no field with yes or no. A field
 * not given gets the form's default, is left out when optional, and is a usage error otherwise.
 */
export function combinedResponse(request: Combined, flag: 'answer' | 'deny', pairs: readonly string[]): Record<string, unknown> {
  const decision = request.items.find((i) => i.key === DECISION_KEY);
  if (request.items.some((i) => i.kind === 'questions')) throw new UsageError(`Interaction ${request.id} holds questions the command line cannot answer: use the web client or the API.`);
  if (flag === 'deny' && !decision) throw new UsageError(`Interaction ${request.id} cannot be declined as a whole: answer it with ${howToAnswerCombined(request)}.`);
  const given = new Map<string, string[]>();
  const known = fields(request);
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--answer takes "field=value", not "${pair}".`);
    const key = pair.slice(0, at).trim();
    if (!known.some((i) => i.key === key)) throw new UsageError(`"${key}" is not a field of this request (${known.map((i) => i.key).join(', ')}).`);
    given.set(key, [...(given.get(key) ?? []), pair.slice(at + 1).trim()]);
  }
  const responses: Record<string, ItemAnswer> = {};
  for (const item of known) {
    const values = given.get(item.key);
    const answer = values ? fromValues(item, values) : flag === 'deny' ? placeholder(item) : fromDefault(item);
    if (answer) responses[item.key] = answer;
  }
  if (decision) responses[DECISION_KEY] = { kind: 'confirm', confirmed: flag === 'answer' };
  return { kind: 'combined', responses };
}

function fromValues(item: CombinedItem, values: string[]): ItemAnswer {
  if (item.kind === 'select') {
    if (!item.multiple && values.length > 1) throw new UsageError(`${item.key} takes one value.`);
    const selected = values.map((v) => {
      const option = item.options.find((o) => o.value === v) ?? item.options.find((o) => o.label.toLowerCase() === v.toLowerCase() || o.value.toLowerCase() === v.toLowerCase());
      if (!option || option.value === '') throw new UsageError(`"${v}" is not one of ${item.options.filter((o) => o.value !== '').map((o) => o.value).join(', ')} (for ${item.key}).`);
      return option.value;
    });
    return { kind: 'select', selected };
  }
  if (values.length > 1) throw new UsageError(`${item.key} takes one value.`);
  const value = values[0]!;
  if (item.kind === 'confirm') {
    if (!YES.has(value.toLowerCase()) && !NO.has(value.toLowerCase())) throw new UsageError(`${item.key} takes yes or no, not "${value}".`);
    return { kind: 'confirm', confirmed: YES.has(value.toLowerCase()) };
  }
  return { kind: 'input', text: value };
}

/** A field not given: the form's default, nothing when optional; a required field without one is a usage error. */
function fromDefault(item: CombinedItem): ItemAnswer | undefined {
  if (item.kind === 'input' && item.defaultValue !== undefined) return { kind: 'input', text: item.defaultValue };
  if (item.kind === 'select' && item.defaultSelected?.length) return { kind: 'select', selected: item.defaultSelected };
  if (item.kind === 'confirm' && item.defaultConfirmed !== undefined) return { kind: 'confirm', confirmed: item.defaultConfirmed };
  if (item.optional) return undefined;
  throw new UsageError(`${item.key} is required: add --answer ${item.key}=VALUE.`);
}

/** Declining: a required field still needs an item in the response; what it holds is never sent (a decline carries no content). */
function placeholder(item: CombinedItem): ItemAnswer | undefined {
  if (item.optional) return undefined;
  if (item.kind === 'select') return { kind: 'select', selected: item.defaultSelected?.length ? item.defaultSelected : [item.options[0]!.value] };
  if (item.kind === 'confirm') return { kind: 'confirm', confirmed: item.defaultConfirmed ?? false };
  return { kind: 'input', text: '' };
}
