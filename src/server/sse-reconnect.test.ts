import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { enc, startHarness, TOKENS, type Harness } from './test-support/harness.js';
import { SseClient } from './test-support/sse-client.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

describe('GET /runs/:id/events', () => {
  test('a client cut off mid-run reconnects with Last-Event-ID and misses nothing, twice nothing', async () => {
    const model = h.script([
      { text: 'First I write one file, then another.', toolCalls: [{ name: 'Write', input: { file_path: 'one.txt', content: '1' } }] },
      { text: 'Now the second.', toolCalls: [{ name: 'Write', input: { file_path: 'two.txt', content: '2' } }] },
      { text: 'Both written.' },
      { text: 'Bye.' },
    ]);
    const { body: run } = await h.api('alice', 'POST', '/runs', { task: 'two files', model });
    const url = `${h.url}/runs/${run.id}/events`;

    // First connection: up to the first ask, then the connection drops.
    const first = new SseClient(url, { token: TOKENS.alice });
    const ask1 = await first.waitFor((e) => e.type === 'interaction.requested');
    first.abort();
    await first.done;
    const lastSeen = first.events.at(-1)!.seq;

    // While nobody listens the run goes on: answered, the tool runs, the next ask comes.
    const id1 = (ask1.data as { request: { id: string } }).request.id;
    expect((await h.api('alice', 'POST', `/interactions/${enc(id1)}/respond`, { kind: 'confirm', confirmed: true })).status).toBe(200);

    // Second connection resumes after the last event it saw, and sees the second ask live.
    const second = new SseClient(url, { token: TOKENS.alice, lastEventId: lastSeen });
    const ask2 = await second.waitFor((e) => e.type === 'interaction.requested' && (e.data as { request: { id: string } }).request.id !== id1);
    const id2 = (ask2.data as { request: { id: string } }).request.id;
    expect((await h.api('alice', 'POST', `/interactions/${enc(id2)}/respond`, { kind: 'confirm', confirmed: true })).status).toBe(200);
    const ask3 = await second.waitFor((e) => e.type === 'interaction.requested' && (e.data as { request: { kind: string } }).request.kind === 'input');
    second.abort();
    await second.done;

    // Third connection via ?after= (clients that cannot set headers), to the end of the run.
    const third = new SseClient(`${url}?after=${second.events.at(-1)!.seq}`, { token: TOKENS.alice });
    await h.api('alice', 'POST', `/runs/${run.id}/messages`, { text: 'thanks' });
    await third.waitFor((e) => e.type === 'interaction.requested' && (e.data as { request: { id: string } }).request.id !== (ask3.data as { request: { id: string } }).request.id);
    await h.api('alice', 'POST', `/runs/${run.id}/cancel`);
    await third.done; // the server ends the stream once the run has finished

    const seen = [...first.events, ...second.events, ...third.events].map((e) => e.seq);
    const log = (await h.store.readEvents(run.id)).map((e) => e.seq);
    expect(seen).toEqual(log);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(Array.from({ length: seen.length }, (_, i) => i + 1));
    expect(second.events[0]!.seq).toBe(lastSeen + 1);
  });

  test('every frame carries its seq as id and its type as event name', async () => {
    const { body: run } = await h.api('alice', 'POST', '/runs', { task: 't', model: h.script([{ text: 'hello' }]) });
    const sse = new SseClient(`${h.url}/runs/${run.id}/events`, { token: TOKENS.alice });
    await sse.waitFor((e) => e.type === 'interaction.requested');
    sse.abort();
    for (const frame of sse.frames) {
      const event = JSON.parse(frame.data);
      expect(frame.id).toBe(String(event.seq));
      expect(frame.event).toBe(event.type);
    }
  });

  test('a finished run replays its log and the stream ends; nothing after the last id ends at once', async () => {
    const { body: run } = await h.api('alice', 'POST', '/runs', { task: 't', model: h.script([{ text: 'x' }]) });
    const live = new SseClient(`${h.url}/runs/${run.id}/events`, { token: TOKENS.alice });
    await live.waitFor((e) => e.type === 'interaction.requested');
    await h.api('alice', 'POST', `/runs/${run.id}/cancel`);
    await live.done;
    const replay = new SseClient(`${h.url}/runs/${run.id}/events`, { token: TOKENS.alice });
    await replay.done;
    expect(replay.events.map((e) => e.seq)).toEqual(live.events.map((e) => e.seq));
    const tail = new SseClient(`${h.url}/runs/${run.id}/events`, { token: TOKENS.alice, lastEventId: live.events.at(-1)!.seq });
    await tail.done;
    expect(tail.events).toEqual([]);
  });

  test('400 for a Last-Event-ID that is not a seq', async () => {
    const { body: run } = await h.api('alice', 'POST', '/runs', { task: 't', model: h.script([{ text: 'x' }]) });
    const res = await h.api('alice', 'GET', `/runs/${run.id}/events`, undefined, { 'last-event-id': 'abc' });
    expect(res.status).toBe(400);
    expect(res.body.error.field).toBe('Last-Event-ID');
  });
});
