import type { InteractionBroker, InteractionResponder } from './broker.js';
import type { CombinedItem, InteractionRequest } from './request.js';
import type { InteractionResponseInput, ItemResponse } from './response.js';

/** A function that answers a request; return undefined to cancel it instead. */
export type AutoResponseFn = (request: InteractionRequest) => InteractionResponseInput | undefined | Promise<InteractionResponseInput | undefined>;

/** `allow`: approve every ask; `deny`: refuse every ask; `default`: each request's default answer (asks refused). */
export type AutoResponse = 'allow' | 'deny' | 'default' | AutoResponseFn;

function itemAnswer(body: InteractionRequest | CombinedItem, confirm: boolean): Omit<ItemResponse, 'kind'> {
  switch (body.kind) {
    case 'input':
      return { text: body.defaultValue ?? '' };
    case 'select':
      return { selected: body.defaultSelected?.length ? body.defaultSelected : [body.options[0]!.value] };
    case 'confirm':
      return confirm ? { confirmed: true } : { confirmed: false, message: 'Denied automatically (non-interactive mode).' };
    case 'questions':
      return { answers: Object.fromEntries(body.questions.map((q) => [q.question, q.options[0]!.label])) };
    case 'combined':
      return {};
  }
}

/** The answer a policy gives: questions and selects get their first option, inputs their default. */
export function defaultAnswer(request: InteractionRequest, policy: 'allow' | 'deny' | 'default'): InteractionResponseInput {
  const confirm = policy === 'allow';
  const base = { requestId: request.id, kind: request.kind, userId: `auto:${policy}` };
  if (request.kind === 'combined') {
    // A form's yes/no field with a default gets it; a request's own confirm never takes one from its author.
    const responses = Object.fromEntries(request.items.map((item) => [item.key, { kind: item.kind, ...(item.kind === 'confirm' && item.defaultConfirmed !== undefined ? { confirmed: item.defaultConfirmed } : itemAnswer(item, confirm)) }]));
    return { ...base, responses } as InteractionResponseInput;
  }
  return { ...base, ...itemAnswer(request, confirm) } as InteractionResponseInput;
}

/** A responder that answers every request at once, without a person (non-interactive mode). */
export function createAutoResponder(policy: AutoResponse): InteractionResponder {
  return {
    deliver(request: InteractionRequest, broker: InteractionBroker) {
      void (async () => {
        try {
          const answer = typeof policy === 'function' ? await policy(request) : defaultAnswer(request, policy);
          if (answer === undefined) await broker.close(request.id, 'cancelled', 'the auto-responder declined to answer');
          else await broker.respond(answer);
        } catch (error) {
          // An auto-responder that fails must not leave the run waiting for ever.
          await broker.close(request.id, 'cancelled', `the auto-responder failed: ${(error as Error).message}`);
        }
      })();
    },
  };
}

/** Batch mode: nobody can answer, so every request is cancelled at once with a reason saying so. */
export const batchResponder: InteractionResponder = {
  deliver(request, broker) {
    void broker.close(request.id, 'cancelled', 'batch mode: no person can answer');
  },
};
