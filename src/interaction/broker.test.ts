import { describe, expect, it, vi } from 'vitest';
import { InteractionBroker } from './broker.js';
import { InteractionCancelledError, InteractionExpiredError, InvalidResponseError } from './errors.js';
import { createInputChannel } from './input-channel.js';
import { createAutoResponder } from './auto-responder.js';

describe('InteractionBroker', () => {
  it('expires a request after its timeout and refuses a late answer', async () => {
    vi.useFakeTimers();
    try {
      const broker = new InteractionBroker();
      const outcome = broker.open({ kind: 'confirm', title: 'ok?' }, { runId: 'r', timeoutMs: 60_000 });
      const id = broker.pending()[0]!.id;
      await vi.advanceTimersByTimeAsync(60_000);
      await expect(outcome).resolves.toMatchObject({ status: 'expired', reason: 'no one answered within 60 s' });
      await expect(broker.respond({ requestId: id, kind: 'confirm', confirmed: true })).rejects.toBeInstanceOf(InteractionExpiredError);
    } finally {
      vi.useRealTimers();
    }
  });

  it('cancels on abort, removes the listener path, and withdraws from the channel', async () => {
    const { channel, handle } = createInputChannel();
    const broker = new InteractionBroker({ responder: channel });
    const controller = new AbortController();
    const outcome = broker.open({ kind: 'input', title: 'name?' }, { runId: 'r', signal: controller.signal });
    const request = (await handle.nextRequest())!;
    controller.abort();
    await expect(outcome).resolves.toMatchObject({ status: 'cancelled' });
    expect(handle.pending()).toEqual([]);
    await expect(handle.respond({ requestId: request.id, kind: 'input', text: 'x' })).rejects.toBeInstanceOf(InteractionCancelledError);
  });

  it('an answer stored elsewhere settles the waiting request once, with one event, unclaimed here', async () => {
    const claimAnswer = vi.fn(async () => {});
    let saved!: () => void;
    const saving = new Promise<undefined>((resolve) => (saved = () => resolve(undefined)));
    const events: string[] = [];
    const broker = new InteractionBroker({
      persistence: { save: () => saving, claimAnswer, close: async () => {} },
      onEvent: (event) => events.push(event.type),
    });
    const outcome = broker.open({ id: 'ask_1', kind: 'confirm', title: 'ok?' }, { runId: 'r' });
    const respondedAt = new Date(0).toISOString();
    const response = {
      requestId: 'ask_1', kind: 'confirm' as const, confirmed: false, message: 'not now', respondedAt,
    };
    // Arrives while the request is still being saved: it waits for the save, then settles it.
    const first = broker.answeredElsewhere('ask_1', response);
    const second = broker.answeredElsewhere('ask_1', response);
    saved();
    expect(await Promise.all([first, second])).toEqual([true, false]);
    const answered = { status: 'answered', response: { confirmed: false, message: 'not now' } };
    await expect(outcome).resolves.toMatchObject(answered);
    expect(events.filter((type) => type === 'interaction.answered')).toHaveLength(1);
    expect(claimAnswer).not.toHaveBeenCalled();
    expect(await broker.answeredElsewhere('unknown', response)).toBe(false);
  });

  it('validates combined responses item by item, naming the field', async () => {
    const broker = new InteractionBroker();
    const outcome = broker.open(
      {
        kind: 'combined',
        title: 'setup',
        items: [
          { key: 'name', title: 'Name', kind: 'input', required: true },
          { key: 'env', title: 'Env', kind: 'select', options: [{ value: 'dev', label: 'Dev' }, { value: 'prod', label: 'Prod' }] },
        ],
      },
      { runId: 'r' },
    );
    const id = broker.pending()[0]!.id;
    const bad = broker.respond({ requestId: id, kind: 'combined', responses: { name: { kind: 'input', text: 'x' }, env: { kind: 'select', selected: ['staging'] } } });
    await expect(bad).rejects.toBeInstanceOf(InvalidResponseError);
    await expect(bad).rejects.toMatchObject({ field: 'responses.env.selected' });
    await expect(broker.respond({ requestId: id, kind: 'combined', responses: { name: { kind: 'input', text: ' ' }, env: { kind: 'select', selected: ['dev'] } } })).rejects.toThrow(/required/);
    await broker.respond({ requestId: id, kind: 'combined', responses: { name: { kind: 'input', text: 'sage' }, env: { kind: 'select', selected: ['dev'] } } });
    await expect(outcome).resolves.toMatchObject({ status: 'answered', response: { responses: { name: { text: 'sage' } } } });
  });

  it('refuses unknown fields in a response', async () => {
    const broker = new InteractionBroker();
    void broker.open({ kind: 'confirm', title: 'ok?' }, { runId: 'r' });
    const id = broker.pending()[0]!.id;
    await expect(broker.respond({ requestId: id, kind: 'confirm', confirmed: true, approve: 'yes' })).rejects.toThrow(/Unrecognized key/);
  });

  it('an auto-responder that throws cancels the request instead of hanging', async () => {
    const broker = new InteractionBroker({ responder: createAutoResponder(() => { throw new Error('boom'); }) });
    const outcome = await broker.open({ kind: 'confirm', title: 'ok?' }, { runId: 'r' });
    expect(outcome).toMatchObject({ status: 'cancelled', reason: 'the auto-responder failed: boom' });
  });

  it('answers selects with their first option and inputs with their default in default mode', async () => {
    const broker = new InteractionBroker({ responder: createAutoResponder('default') });
    const select = await broker.open({ kind: 'select', title: 'env', options: [{ value: 'dev', label: 'Dev' }, { value: 'prod', label: 'Prod' }] }, { runId: 'r' });
    expect(select).toMatchObject({ status: 'answered', response: { selected: ['dev'] } });
    const confirm = await broker.open({ kind: 'confirm', title: 'ok?' }, { runId: 'r' });
    expect(confirm).toMatchObject({ status: 'answered', response: { confirmed: false } });
  });
});
