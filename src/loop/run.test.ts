import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInputChannel, InvalidResponseError, InteractionAlreadyAnsweredError, InteractionNotFoundError } from '../interaction/index.js';
import { askUserQuestionTool } from '../tool/index.js';
import type { Tool } from '../tool/types.js';
import { run } from './run.js';
import { collect, recordingTool, script, types } from './test-support/fixtures.js';

const question = {
  questions: [
    { question: 'Which database?', header: 'Database', options: [{ label: 'SQLite', description: 'embedded' }, { label: 'Postgres', description: 'server' }] },
  ],
};

describe('seed 000 appendix C', () => {
  it('interactive question flow: the run waits for the answer given through the channel', async () => {
    const { channel, handle } = createInputChannel();
    const r = run('pick a database', {
      model: script([{ toolCalls: [{ name: 'AskUserQuestion', input: question }] }, { text: 'Using Postgres.' }]),
      tools: [askUserQuestionTool],
      mode: { type: 'interactive', responder: channel },
    });
    const events = collect(r);
    const request = await handle.nextRequest();
    expect(request?.kind).toBe('questions');
    await handle.respond({ requestId: request!.id, kind: 'questions', answers: { 'Which database?': 'Postgres' } });
    const input = await handle.nextRequest();
    expect(input?.kind).toBe('input');
    await handle.respond({ requestId: input!.id, kind: 'input', text: '' });
    const outcome = await r.outcome;
    expect(outcome.status).toBe('completed');
    expect(outcome.finalText).toBe('Using Postgres.');
    const toolMessage = outcome.messages.find((m) => m.role === 'tool');
    expect(toolMessage?.content).toContain('User answered: "Which database?"="Postgres"');
    expect(types(await events)).toContain('interaction.answered');
  });

  it('non-interactive auto-response allows the call and gives questions their first option', async () => {
    const tool = recordingTool();
    const r = run('go', {
      model: script([
        { toolCalls: [{ name: 'AskUserQuestion', input: question }, { name: 'write_note', input: { text: 'hello' } }] },
        { text: 'done' },
      ]),
      tools: [askUserQuestionTool, tool],
      mode: { type: 'non-interactive', autoResponse: 'allow' },
    });
    const outcome = await r.outcome;
    expect(outcome.status).toBe('completed');
    expect(tool.calls).toEqual(['hello']);
    expect(outcome.messages.find((m) => m.role === 'tool')?.content).toContain('"SQLite"');
  });

  it('interaction timeout: an unanswered permission ask is denied with a reason, not as a user denial', async () => {
    const tool = recordingTool();
    const { channel } = createInputChannel();
    const r = run('go', {
      model: script([{ toolCalls: [{ name: 'write_note', input: { text: 'x' } }] }, { text: 'ok' }]),
      tools: [tool],
      mode: { type: 'interactive', responder: channel },
      interactionTimeoutMs: 50,
    });
    const events = await collect(r);
    const outcome = await r.outcome;
    expect(tool.calls).toEqual([]);
    expect(types(events)).toContain('interaction.expired');
    const result = outcome.messages.find((m) => m.role === 'tool')!;
    expect(result.content).toContain('no one answered within 0.1 s');
    expect(result.content).toContain('not a denial');
    expect(outcome.toolHistory[0]!.decision.reason).toMatch(/^timed out/);
  });
});

describe('modes', () => {
  it('batch mode turns an ask into a deny that says why', async () => {
    const tool = recordingTool();
    const r = run('go', { model: script([{ toolCalls: [{ name: 'write_note', input: { text: 'x' } }] }, { text: 'ok' }]), tools: [tool], mode: { type: 'batch' } });
    const outcome = await r.outcome;
    expect(tool.calls).toEqual([]);
    expect(outcome.status).toBe('completed');
    expect(outcome.messages.find((m) => m.role === 'tool')!.content).toContain('batch mode');
    expect(outcome.toolHistory[0]!.decision).toMatchObject({ behavior: 'deny', source: 'mode' });
  });

  it('deny-all auto-responder refuses the ask and the model reads a denial', async () => {
    const tool = recordingTool();
    const outcome = await run('go', {
      model: script([{ toolCalls: [{ name: 'write_note', input: { text: 'x' } }] }, { text: 'ok' }]),
      tools: [tool],
      mode: { type: 'non-interactive', autoResponse: 'deny' },
    }).outcome;
    expect(tool.calls).toEqual([]);
    expect(outcome.messages.find((m) => m.role === 'tool')!.content).toContain('The user denied write_note');
  });

  it('a function auto-responder decides per request', async () => {
    const tool = recordingTool();
    const outcome = await run('go', {
      model: script([{ toolCalls: [{ name: 'write_note', input: { text: 'a' } }, { name: 'write_note', input: { text: 'b' } }] }, { text: 'ok' }]),
      tools: [tool],
      mode: {
        type: 'non-interactive',
        autoResponse: (req) => ({ requestId: req.id, kind: 'confirm', confirmed: (req as { input?: { text?: string } }).input?.text === 'a' }),
      },
    }).outcome;
    expect(tool.calls).toEqual(['a']);
    expect(outcome.toolHistory.map((h) => h.decision.behavior)).toEqual(['allow', 'deny']);
  });

  it('stops at maxSteps with status max_steps', async () => {
    const tool = recordingTool('note', { readOnly: true });
    const outcome = await run('go', {
      model: script([{ toolCalls: [{ name: 'note', input: { text: '1' } }] }, { toolCalls: [{ name: 'note', input: { text: '2' } }] }, { text: 'never' }]),
      tools: [tool],
      maxSteps: 2,
      mode: { type: 'batch' },
    }).outcome;
    expect(outcome.status).toBe('max_steps');
    expect(outcome.stats.steps).toBe(2);
  });

  it('a script that runs out of turns fails the run clearly', async () => {
    const tool = recordingTool('note', { readOnly: true });
    const outcome = await run('go', { model: script([{ toolCalls: [{ name: 'note', input: { text: '1' } }] }]), tools: [tool], mode: { type: 'batch' } }).outcome;
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('script_exhausted');
    expect(outcome.error?.message).toContain('asked for turn 2');
  });
});

describe('tool calls', () => {
  it('gives the model an error result for bad input and unknown tools, and goes on', async () => {
    const tool = recordingTool('note', { readOnly: true });
    const outcome = await run('go', {
      model: script([{ toolCalls: [{ name: 'note', input: { text: 5 } }, { name: 'nope', input: {} }] }, { text: 'ok' }]),
      tools: [tool],
      mode: { type: 'batch' },
    }).outcome;
    const results = outcome.messages.filter((m) => m.role === 'tool');
    expect(results[0]!.content).toContain('the input for note is invalid: text:');
    expect(results[1]!.content).toContain('there is no tool named "nope"');
    expect(outcome.status).toBe('completed');
  });

  it('runs read-only calls concurrently and returns results in call order', async () => {
    // Concurrency is observed, not timed (a loaded machine stretches any time): every call waits
    // until all three have started, which only happens if none waits for another to finish.
    let inFlight = 0;
    let peak = 0;
    let release!: () => void;
    const allStarted = new Promise<void>((resolve) => (release = resolve));
    const gated = (name: string, delayMs: number): Tool<{ text: string }> => ({
      ...recordingTool(name, { readOnly: true }),
      async execute(input) {
        peak = Math.max(peak, ++inFlight);
        if (peak === 3) release();
        await Promise.race([allStarted, new Promise((r) => setTimeout(r, 2_000))]);
        // eslint-disable-next-line sage/no-fixed-sleep -- a slow tool: finishing out of call order is the subject
        await new Promise((r) => setTimeout(r, delayMs));
        inFlight--;
        return `${name}: ${input.text}`;
      },
    });
    const outcome = await run('go', {
      model: script([
        { toolCalls: [{ name: 'slow', input: { text: 'a' } }, { name: 'slow', input: { text: 'b' } }, { name: 'fast', input: { text: 'c' } }] },
        { text: 'ok' },
      ]),
      tools: [gated('slow', 80), gated('fast', 5)],
      mode: { type: 'batch' },
    }).outcome;
    expect(peak).toBe(3);
    const results = outcome.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(results).toEqual(['slow: a', 'slow: b', 'fast: c']);
  });

  it('asks one at a time in call order; a rejection cancels the remaining asks of the turn', async () => {
    const tool = recordingTool();
    const { channel, handle } = createInputChannel();
    const r = run('go', {
      model: script([
        { toolCalls: [{ name: 'write_note', input: { text: 'a' } }, { name: 'write_note', input: { text: 'b' } }, { name: 'write_note', input: { text: 'c' } }] },
        { text: 'ok' },
      ]),
      tools: [tool],
      mode: { type: 'interactive', responder: channel },
    });
    const first = await handle.nextRequest();
    expect(handle.pending()).toHaveLength(1);
    expect((first as { input: unknown }).input).toEqual({ text: 'a' });
    await handle.respond({ requestId: first!.id, kind: 'confirm', confirmed: true });
    const second = await handle.nextRequest();
    expect((second as { input: unknown }).input).toEqual({ text: 'b' });
    await handle.respond({ requestId: second!.id, kind: 'confirm', confirmed: false, message: 'not b' });
    const input = await handle.nextRequest();
    expect(input?.kind).toBe('input');
    await handle.respond({ requestId: input!.id, kind: 'input', text: '' });
    const outcome = await r.outcome;
    expect(tool.calls).toEqual(['a']);
    const results = outcome.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(results[1]).toContain('The user said: "not b"');
    expect(results[2]).toContain('rejected write_note earlier in this turn');
  });

  it('runs the input as the person edited it, and tells the model', async () => {
    const tool = recordingTool();
    const outcome = await run('go', {
      model: script([{ toolCalls: [{ name: 'write_note', input: { text: 'rm everything' } }] }, { text: 'ok' }]),
      tools: [tool],
      mode: { type: 'non-interactive', autoResponse: (req) => ({ requestId: req.id, kind: 'confirm', confirmed: true, updatedInput: { text: 'rm one file' } }) },
    }).outcome;
    expect(tool.calls).toEqual(['rm one file']);
    expect(outcome.messages.find((m) => m.role === 'tool')!.content).toContain('the user edited the input');
  });

  it('an edited input that no longer validates is not run', async () => {
    const tool = recordingTool();
    const outcome = await run('go', {
      model: script([{ toolCalls: [{ name: 'write_note', input: { text: 'x' } }] }, { text: 'ok' }]),
      tools: [tool],
      mode: { type: 'non-interactive', autoResponse: (req) => ({ requestId: req.id, kind: 'confirm', confirmed: true, updatedInput: { text: 42 } }) },
    }).outcome;
    expect(tool.calls).toEqual([]);
    expect(outcome.toolHistory[0]!.decision.behavior).toBe('deny');
  });

  it('a gate that throws denies instead of allowing', async () => {
    const tool = recordingTool();
    const outcome = await run('go', {
      model: script([{ toolCalls: [{ name: 'write_note', input: { text: 'x' } }] }, { text: 'ok' }]),
      tools: [tool],
      gate: { decide: () => { throw new Error('rules file unreadable'); } },
      mode: { type: 'non-interactive', autoResponse: 'allow' },
    }).outcome;
    expect(tool.calls).toEqual([]);
    expect(outcome.toolHistory[0]!.decision.reason).toContain('rules file unreadable');
  });
});

describe('response validation', () => {
  it('refuses the wrong kind, unknown ids, bad options and second answers; the first valid answer wins', async () => {
    const { channel, handle } = createInputChannel();
    const r = run('go', {
      model: script([{ toolCalls: [{ name: 'AskUserQuestion', input: question }] }, { text: 'ok' }]),
      tools: [askUserQuestionTool],
      mode: { type: 'interactive', responder: channel },
    });
    const request = (await handle.nextRequest())!;
    await expect(handle.respond({ requestId: request.id, kind: 'confirm', confirmed: true })).rejects.toBeInstanceOf(InvalidResponseError);
    await expect(handle.respond({ requestId: 'nope', kind: 'questions', answers: {} })).rejects.toBeInstanceOf(InteractionNotFoundError);
    await expect(handle.respond({ requestId: request.id, kind: 'questions', answers: { 'Other question?': 'x' } })).rejects.toThrow(/not one of the questions/);
    await expect(handle.respond({ requestId: request.id, kind: 'questions', answers: { 'Which database?': ['SQLite', 'Postgres'] } })).rejects.toThrow(/takes one answer/);
    const [first, second] = await Promise.allSettled([
      handle.respond({ requestId: request.id, kind: 'questions', answers: { 'Which database?': 'SQLite' }, userId: 'alice' }),
      handle.respond({ requestId: request.id, kind: 'questions', answers: { 'Which database?': 'Postgres' }, userId: 'bob' }),
    ]);
    expect(first.status).toBe('fulfilled');
    expect(second.status).toBe('rejected');
    const error = (second as PromiseRejectedResult).reason as InteractionAlreadyAnsweredError;
    expect(error).toBeInstanceOf(InteractionAlreadyAnsweredError);
    expect(error.message).toContain('by alice');
    const input = (await handle.nextRequest())!;
    await handle.respond({ requestId: input.id, kind: 'input', text: '' });
    const outcome = await r.outcome;
    expect(outcome.messages.find((m) => m.role === 'tool')!.content).toContain('"SQLite"');
  });
});

describe('cancellation', () => {
  it('cancels while a tool runs: the tool sees the abort and the outcome says cancelled', async () => {
    const tool = recordingTool('slow', { readOnly: true, delayMs: 10_000 });
    const r = run('go', { model: script([{ toolCalls: [{ name: 'slow', input: { text: 'x' } }] }, { text: 'ok' }]), tools: [tool], mode: { type: 'batch' } });
    const events: string[] = [];
    for await (const event of r) {
      events.push(event.type);
      if (event.type === 'tool.started') r.cancel();
    }
    const outcome = await r.outcome;
    expect(outcome.status).toBe('cancelled');
    expect(tool.calls).toEqual([]);
    expect(events.at(-2)).toBe('run.cancelled');
    expect(r.state).toEqual({ state: 'completed', reason: 'cancelled' });
  });

  it('cancels while waiting for a person: the pending interaction is cancelled', async () => {
    const { channel, handle } = createInputChannel();
    const tool = recordingTool();
    const r = run('go', { model: script([{ toolCalls: [{ name: 'write_note', input: { text: 'x' } }] }, { text: 'ok' }]), tools: [tool], mode: { type: 'interactive', responder: channel } });
    const events = collect(r);
    const request = (await handle.nextRequest())!;
    r.cancel();
    const outcome = await r.outcome;
    expect(outcome.status).toBe('cancelled');
    expect(types(await events)).toContain('interaction.cancelled');
    await expect(handle.respond({ requestId: request.id, kind: 'confirm', confirmed: true })).rejects.toThrow(/cancelled/);
    expect(tool.calls).toEqual([]);
  });

  it('an outside AbortSignal cancels the run', async () => {
    const controller = new AbortController();
    const tool = recordingTool('slow', { readOnly: true, delayMs: 10_000 });
    const r = run('go', { model: script([{ toolCalls: [{ name: 'slow', input: { text: 'x' } }] }]), tools: [tool], mode: { type: 'batch' }, signal: controller.signal });
    setTimeout(() => controller.abort(), 30);
    expect((await r.outcome).status).toBe('cancelled');
  });

  it('the execution timeout fails the run with a clear code', async () => {
    const tool = recordingTool('slow', { readOnly: true, delayMs: 10_000 });
    const outcome = await run('go', { model: script([{ toolCalls: [{ name: 'slow', input: { text: 'x' } }] }]), tools: [tool], mode: { type: 'batch' }, executionTimeoutMs: 40 }).outcome;
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('execution_timeout');
  });
});

describe('pause and resume', () => {
  it('pauses at the next boundary and continues on resume', async () => {
    const tool = recordingTool('note', { readOnly: true, delayMs: 20 });
    const r = run('go', {
      model: script([{ toolCalls: [{ name: 'note', input: { text: '1' } }] }, { toolCalls: [{ name: 'note', input: { text: '2' } }] }, { text: 'ok' }]),
      tools: [tool],
      mode: { type: 'batch' },
    });
    const seen: string[] = [];
    for await (const event of r) {
      if (event.type === 'tool.started' && seen.length === 0) r.pause();
      if (event.type === 'state.changed' && event.data.to.state === 'paused') {
        seen.push('paused');
        expect(tool.calls).toEqual(['1']);
        setTimeout(() => r.resume(), 20);
      }
    }
    expect(seen).toEqual(['paused']);
    expect(tool.calls).toEqual(['1', '2']);
    expect((await r.outcome).status).toBe('completed');
  });
});

describe('outcome and trajectory', () => {
  it('reports stats, tool history, usage and writes every event to a JSONL trajectory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sage-traj-'));
    const path = join(dir, 'sub', 'trajectory.jsonl');
    const tool = recordingTool('note', { readOnly: true });
    const r = run('go', {
      model: script([{ text: 'thinking', toolCalls: [{ name: 'note', input: { text: '1' } }] }, { text: 'finished' }]),
      tools: [tool],
      mode: { type: 'batch' },
      trajectoryPath: path,
    });
    const events = await collect(r);
    const outcome = await r.outcome;
    expect(outcome).toMatchObject({ status: 'completed', finalText: 'finished', stats: { steps: 2, toolCalls: 1, modelCalls: 2 } });
    expect(outcome.toolHistory[0]).toMatchObject({ name: 'note', input: { text: '1' }, decision: { behavior: 'allow' }, result: { content: 'note: 1', isError: false } });
    expect(outcome.usage.outputTokens).toBeGreaterThan(0);
    const lines = readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.seq)).toEqual(events.map((e) => e.seq));
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  });
});

describe('the first event', () => {
  it('a run\'s stream starts with run.started (seq 1), before any state change', async () => {
    const events = await collect(run('go', { model: script([{ text: 'done' }]), mode: { type: 'batch' } }));
    expect(events[0]).toMatchObject({ seq: 1, type: 'run.started', data: { task: 'go', mode: 'batch' } });
    expect(events[1]).toMatchObject({ type: 'state.changed', data: { from: { state: 'initializing' }, to: { state: 'idle' } } });
    expect(types(events).filter((t) => t === 'run.started')).toHaveLength(1);
  });

  it('a run cancelled before it starts still opens its stream with run.started', async () => {
    const controller = new AbortController();
    controller.abort();
    const r = run('go', { model: script([{ text: 'never' }]), mode: { type: 'batch' }, signal: controller.signal });
    const events = await collect(r);
    expect(events[0]?.type).toBe('run.started');
    expect(types(events)).toContain('run.cancelled');
  });

  it('a resumed run continues the stream with run.resumed and emits no second run.started', async () => {
    const { channel, handle } = createInputChannel();
    const first = run('go', { model: script([{ text: 'first answer' }, { text: 'second answer' }]), mode: { type: 'interactive', responder: channel } });
    const firstEvents = collect(first);
    await handle.nextRequest();
    first.suspend('nobody is there');
    expect((await first.outcome).status).toBe('suspended');
    const before = await firstEvents;
    const resumed = run('go', {
      model: script([{ text: 'second answer' }]),
      mode: { type: 'batch' },
      resumeFrom: { state: first.snapshot() },
    });
    const after = await collect(resumed);
    expect(after[0]).toMatchObject({ type: 'run.resumed', seq: before.at(-1)!.seq + 1 });
    expect(types(after)).not.toContain('run.started');
  });
});
