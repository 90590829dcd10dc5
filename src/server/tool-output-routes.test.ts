import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { enc, eventually, startHarness, type Harness } from './test-support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** Every line of `seq 1 n`, as the command prints it. */
const seqText = (n: number) => Array.from({ length: n }, (_, i) => String(i + 1)).join('\n');

async function ranBash(command: string): Promise<{ runId: string; toolCallId: string }> {
  const started = await h.api('alice', 'POST', '/runs', { task: 'print', model: h.script([{ text: 'Printing.', toolCalls: [{ name: 'Bash', input: { command } }] }, { text: 'Done.' }]) });
  expect(started.status).toBe(201);
  const runId = started.body.id as string;
  // seq and echo only print: the gate allows them without asking.
  const completed = await eventually(async () => (await h.store.readEvents(runId)).find((e) => e.type === 'tool.completed'));
  return { runId, toolCallId: (completed.data as { toolCallId: string }).toolCallId };
}

/** The run's events as its SSE stream sends them, up to the tool's result. */
async function streamed(runId: string): Promise<Record<string, unknown>[]> {
  const controller = new AbortController();
  const res = await fetch(`${h.url}/runs/${runId}/events`, { headers: { authorization: 'Bearer token-alice-0001', accept: 'text/event-stream' }, signal: controller.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  // The tool's event is in the log already (ranBash waited for it): read until its frame is whole.
  while (!text.includes('event: tool.completed\n') || !text.slice(text.indexOf('event: tool.completed\n')).includes('\n\n')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  controller.abort();
  return text
    .split('\n\n')
    .map((frame) => frame.split('\n').find((l) => l.startsWith('data: ')))
    .filter((l): l is string => l !== undefined)
    .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
}

describe('GET /runs/:id/tool-calls/:toolCallId/output', () => {
  test('a Bash output over 30,000 characters: the model got it cut, the stream says how long the whole is, the route gives every byte', async () => {
    const { runId, toolCallId } = await ranBash('seq 1 30000');
    const whole = `${seqText(30000)}\nExit code: 0`;
    const stored = (await h.store.readEvents(runId)).find((e) => e.type === 'tool.completed')!.data as { content: string; fullContent?: string };
    expect(stored.content).toContain('characters truncated');
    expect(stored.content.length).toBeLessThan(31_000);
    expect(stored.fullContent).toBe(whole);

    const event = (await streamed(runId)).find((e) => e['type'] === 'tool.completed') as { data: Record<string, unknown> };
    expect(event.data['fullContent']).toBeUndefined();
    expect(event.data['fullContentChars']).toBe(whole.length);
    expect(event.data['content']).toBe(stored.content);

    const res = await fetch(`${h.url}/runs/${runId}/tool-calls/${enc(toolCallId)}/output?download=1`, { headers: { authorization: 'Bearer token-alice-0001' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="Bash-${toolCallId.replace(/[^\w.-]/g, '_')}.txt"`);
    const body = await res.text();
    expect(body.length).toBe(whole.length);
    expect(body).toBe(whole);
  });

  test('a short output is served as the model got it; another user gets 403, an unknown call 404', async () => {
    const { runId, toolCallId } = await ranBash('echo hi');
    const ok = await h.api('alice', 'GET', `/runs/${runId}/tool-calls/${enc(toolCallId)}/output`);
    expect(ok.status).toBe(200);
    expect(ok.body).toBe('hi\nExit code: 0');
    expect(ok.headers.get('content-disposition')).toMatch(/^inline;/);
    expect((await h.api('bob', 'GET', `/runs/${runId}/tool-calls/${enc(toolCallId)}/output`)).status).toBe(403);
    expect((await h.api('carol', 'GET', `/runs/${runId}/tool-calls/${enc(toolCallId)}/output`)).status).toBe(200);
    const missing = await h.api('alice', 'GET', `/runs/${runId}/tool-calls/nope/output`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('tool_call_not_found');
  });
});
