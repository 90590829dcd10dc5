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
