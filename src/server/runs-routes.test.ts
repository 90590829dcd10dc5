import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { enc, eventually, startAskingRun, startHarness, TOKENS, type Harness } from './test-support/harness.js';
import { SseClient } from './test-support/sse-client.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ maxBodyBytes: 64 * 1024 });
});
afterAll(async () => {
  await h.close();
});

describe('POST /runs', () => {
  test('starts a run owned by the caller and returns it', async () => {
    const res = await h.api('alice', 'POST', '/runs', { task: 'say hi', model: h.script([{ text: 'hi' }]) });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'running', userId: 'alice', channel: 'web', task: 'say hi' });
    expect(res.headers.get('location')).toBe(`/runs/${res.body.id}`);
    // The run really ran: it answered and now waits for the next message.
    await eventually(async () => (await h.store.listInteractions({ runId: res.body.id, status: ['pending'] }))[0]);
  });

  test('with Accept: text/event-stream streams the run from its first event', async () => {
    const sse = new SseClient(`${h.url}/runs`, { token: TOKENS.alice, method: 'POST', body: { task: 'stream it', model: h.script([{ text: 'streamed reply' }]) } });
    const ask = await sse.waitFor((e) => e.type === 'interaction.requested');
    expect(sse.status).toBe(200);
    expect(sse.events[0]!.seq).toBe(1);
    expect(sse.events.map((e) => e.type)).toContain('run.started');
    const text = sse.events.filter((e) => e.type === 'message.delta').map((e) => (e.data as { text: string }).text).join('');
    expect(text).toBe('streamed reply');
    sse.abort();
    expect(ask.runId).toMatch(/^run_/);
  });

  test.each([
    [{ model: 'x' }, 'task'],
    [{ task: '', model: 'x' }, 'task'],
    [{ task: 't', model: 'x', extra: 1 }, ''],
    [{ task: 't', model: 'x', permissionMode: 'yolo' }, 'permissionMode'],
    [{ task: 't', model: 'x', allow: ['Bash(npm test'] }, 'allow.0'],
    [{ task: 't', model: 'x', maxSteps: 0 }, 'maxSteps'],
  ])('400 for an invalid body %j, naming the field', async (body, field) => {
    const res = await h.api('alice', 'POST', '/runs', body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_input');
    if (field) expect(res.body.error.field).toBe(field);
    expect(JSON.stringify(res.body)).not.toMatch(/at .*\.ts:\d+/);
  });

  test('400 for a deny or ask rule with an invisible or look-alike character, naming it and the code point; no run starts and nothing runs', async () => {
    const marker = join(h.dir, 'zero-width-ran');
    const script = h.script([{ text: 'cat', toolCalls: [{ name: 'Bash', input: { command: `cat secret.txt > ${marker}` } }] }, { text: 'done' }]);
    const before = (await h.store.listRuns({ userId: 'bob' })).length;
    for (const [list, rule, named] of [['deny', 'Bash(cat\u200b *)', 'U+200B ZERO WIDTH SPACE'], ['deny', 'Bash(cat *)\u202e', 'U+202E'], ['ask', 'Bash(c\u0430t *)', 'U+0430']] as const) {
      const res = await h.api('bob', 'POST', '/runs', { task: 'read the secret', model: script, [list]: [rule], permissionMode: 'default' });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_input', field: `${list}.0` });
      expect(res.body.error.message).toContain(named);
    }
    expect((await h.api('bob', 'POST', '/runs', { task: 't', model: script, deny: ['Bash(cat\u200b *)'] })).body.error.message).toContain('Bash(cat\\u{200b} *)');
    expect(await h.store.listRuns({ userId: 'bob' })).toHaveLength(before);
    expect(existsSync(marker)).toBe(false);
  });

  test('400 for a model the server cannot resolve, a cwd outside its roots, or a missing cwd', async () => {
    const bad = await h.api('alice', 'POST', '/runs', { task: 't', model: 'nosuch:thing' });
    expect(bad.status).toBe(400);
    const outside = await h.api('alice', 'POST', '/runs', { task: 't', model: h.script([{ text: 'x' }]), cwd: '/etc' });
    expect(outside.body.error).toMatchObject({ code: 'invalid_input', field: 'cwd' });
    const missing = await h.api('alice', 'POST', '/runs', { task: 't', model: h.script([{ text: 'x' }]), cwd: 'no/such/dir' });
    expect(missing.body.error).toMatchObject({ code: 'invalid_input', field: 'cwd' });
  });

  test('400 for malformed JSON, 415 for a body that is not JSON', async () => {
    const broken = await h.api('alice', 'POST', '/runs', '{"task": ');
    expect(broken.status).toBe(400);
    expect(broken.body.error.code).toBe('invalid_input');
    const form = await h.api('alice', 'POST', '/runs', 'task=x', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
    expect(form.body.error.code).toBe('unsupported_media_type');
  });

  test('413 for a body over the cap, as JSON', async () => {
    const res = await h.api('alice', 'POST', '/runs', { task: 'x'.repeat(70 * 1024), model: 'x' });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
  });

  test('a chunked body (no Content-Length) is counted as it arrives: 413 over the cap, read whole under it', async () => {
    const chunked = (body: string) =>
      new Promise<{ status: number; body: { error?: { code: string }; status?: string } }>((resolve, reject) => {
        const req = http.request(`${h.url}/runs`, { method: 'POST', headers: { authorization: `Bearer ${TOKENS.alice}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
        });
        req.on('error', reject);
        // Several chunks, as a streaming client sends them.
        for (let i = 0; i < body.length; i += 16 * 1024) req.write(body.slice(i, i + 16 * 1024));
        req.end();
      });
    const over = await chunked(JSON.stringify({ task: 'x'.repeat(70 * 1024), model: 'x' }));
    expect(over.status).toBe(413);
    expect(over.body.error?.code).toBe('payload_too_large');
    const under = await chunked(JSON.stringify({ task: 'y'.repeat(40 * 1024), model: h.script([{ text: 'hi' }]) }));
    expect(under.status).toBe(201);
    expect(under.body.status).toBe('running');
  });
});

describe('GET /runs and /runs/:id', () => {
  test('lists the caller\'s runs, filtered by status', async () => {
    const { runId } = await startAskingRun(h, 'alice');
    const all = await h.api('alice', 'GET', '/runs');
    expect(all.status).toBe(200);
    expect(all.body.runs.some((r: { id: string }) => r.id === runId)).toBe(true);
    const finished = await h.api('alice', 'GET', '/runs?status=completed,failed');
    expect(finished.body.runs.every((r: { status: string }) => r.status === 'completed' || r.status === 'failed')).toBe(true);
    const bad = await h.api('alice', 'GET', '/runs?status=sleeping');
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('status.0');
    const one = await h.api('alice', 'GET', `/runs/${runId}`);
    expect(one.body).toMatchObject({ id: runId, userId: 'alice' });
    expect(one.body).not.toHaveProperty('owner');
  });

  test('404 for an unknown run, and for an unknown route', async () => {
    const res = await h.api('alice', 'GET', '/runs/run_nope');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('run_not_found');
    const route = await h.api('alice', 'GET', '/nowhere');
    expect(route.status).toBe(404);
    expect(route.body.error.code).toBe('route_not_found');
  });
});

describe('POST /runs/:id/messages', () => {
  test('answers the run\'s next-message request and the run goes on', async () => {
    const model = h.script([{ text: 'first' }, { text: 'second' }]);
    const { body: run } = await h.api('alice', 'POST', '/runs', { task: 't', model });
    await eventually(async () => (await h.store.listInteractions({ runId: run.id, status: ['pending'] }))[0]);
    const res = await h.api('alice', 'POST', `/runs/${run.id}/messages`, { text: 'go on' });
    expect(res.status).toBe(202);
    expect(res.body.interaction).toMatchObject({ status: 'answered', answeredBy: 'alice' });
    const events = await eventually(async () => {
      const log = await h.store.readEvents(run.id);
      return log.filter((e) => e.type === 'message.completed').length === 2 ? log : undefined;
    });
    expect(events.filter((e) => e.type === 'message.completed').map((e) => (e.data as { text: string }).text)).toEqual(['first', 'second']);
  });

  test('409 when the run waits for something else, 409 when it finished, 400 for an empty message', async () => {
    const { runId, interactionId } = await startAskingRun(h);
    const busy = await h.api('alice', 'POST', `/runs/${runId}/messages`, { text: 'hi' });
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe('nothing_to_answer');
    expect(busy.body.error.message).toContain(interactionId);
    const empty = await h.api('alice', 'POST', `/runs/${runId}/messages`, { text: '' });
    expect(empty.status).toBe(400);
    expect(empty.body.error.field).toBe('text');
    await h.api('alice', 'POST', `/runs/${runId}/cancel`);
    const done = await h.api('alice', 'POST', `/runs/${runId}/messages`, { text: 'hi' });
    expect(done.status).toBe(409);
    expect(done.body.error.code).toBe('run_finished');
  });
});

describe('POST /runs/:id/cancel and GET /runs/:id/suspended', () => {
  test('shows what a waiting run waits for, cancels it, then 404s and 409s', async () => {
    const { runId, interactionId, file } = await startAskingRun(h);
    const waiting = await h.api('alice', 'GET', `/runs/${runId}/suspended`);
    expect(waiting.status).toBe(200);
    expect(waiting.body.interaction).toMatchObject({ id: interactionId, kind: 'confirm', status: 'pending' });
    expect(waiting.body.interaction.request.input).toMatchObject({ file_path: file });

    const cancelled = await h.api('alice', 'POST', `/runs/${runId}/cancel`, { reason: 'changed my mind' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    const log = await h.store.readEvents(runId);
    expect(log.map((e) => e.type)).toContain('run.cancelled');
    expect((await h.store.getInteraction(interactionId))?.status).toBe('cancelled');

    const again = await h.api('alice', 'POST', `/runs/${runId}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('run_finished');
    const notWaiting = await h.api('alice', 'GET', `/runs/${runId}/suspended`);
    expect(notWaiting.status).toBe(404);
    expect(notWaiting.body.error.code).toBe('not_waiting');
    const badReason = await h.api('alice', 'POST', `/runs/${runId}/cancel`, { reason: 5 });
    expect(badReason.status).toBe(400);
  });

  test('a cancelled run wrote nothing to disk', async () => {
    const { runId, file } = await startAskingRun(h);
    await h.api('alice', 'POST', `/runs/${enc(runId)}/cancel`);
    expect(() => readFileSync(join(h.dir, file))).toThrow();
  });
});
