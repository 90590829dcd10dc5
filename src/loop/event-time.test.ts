import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { RunEvent } from '../events/index.js';
import type { Model, ModelStreamPart } from '../model/types.js';
import type { PermissionGate } from '../permission/types.js';
import type { Tool } from '../tool/types.js';
import { run } from './run.js';
import { collect } from './test-support/fixtures.js';

// Events the loop emits back to back share one clock read (RunContext.stamp). These tests move the
// clock inside each piece of the caller's code (model, gate, tool, onEvent listener): every event
// after it must carry the new time, so a shared read never outlives the code that ran after it.

const T0 = Date.parse('2026-01-01T00:00:00.000Z');

/** One call of `step`, then "done"; each stream moves the clock to `+10 × call number` ms before its parts. */
function clockModel(): Model {
  let calls = 0;
  return {
    specificationVersion: 'sage.model.v1',
    id: 'test:clock',
    async *stream(): AsyncGenerator<ModelStreamPart> {
      calls++;
      vi.setSystemTime(T0 + 100 * calls + 10);
      if (calls === 1) {
        yield { type: 'tool-call', call: { id: 'c1', name: 'step', input: {} } };
        yield { type: 'finish', finishReason: 'tool-calls', usage: { inputTokens: 1, outputTokens: 1 } };
      } else {
        yield { type: 'text-delta', text: 'done' };
        yield { type: 'finish', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1 } };
      }
    },
  };
}

const clockGate: PermissionGate = {
  decide: () => {
    vi.setSystemTime(T0 + 120);
    return { behavior: 'allow', reason: 'allowed', source: 'default' };
  },
};

const clockTool: Tool<Record<string, never>> = {
  name: 'step',
  description: 'moves the clock',
  inputSchema: z.object({}).strict(),
  risk: 'LOW',
  readOnly: false,
  execute: async () => {
    vi.setSystemTime(T0 + 130);
    return 'ok';
  },
};

/** Each event as `type@ms since T0` (state changes with their target state). */
function timeline(events: RunEvent[]): string[] {
  return events.map((e) => {
    const name = e.type === 'state.changed' ? `state:${e.data.to.phase ?? e.data.to.state}` : e.type;
    return `${name}@${Date.parse(e.at) - T0}`;
  });
}

describe('event timestamps', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('every event after the model, the gate or the tool ran carries the time after it', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: T0 });
    const r = run('go', { model: clockModel(), tools: [clockTool], gate: clockGate, mode: { type: 'non-interactive', autoResponse: 'allow' } });
    const events = await collect(r);
    await r.outcome;
    expect(timeline(events)).toEqual([
      'run.started@0', 'state:idle@0',
      'step.started@0', 'state:preparing_context@0', 'state:calling_model@0',
      'state:processing_response@110', 'message.completed@110', 'state:executing_tools@110', 'tool.requested@110',
      'permission.decided@120', 'tool.started@120',
      'tool.completed@130', 'step.completed@130',
      'step.started@130', 'state:preparing_context@130', 'state:calling_model@130',
      'message.delta@210', 'state:processing_response@210', 'message.completed@210', 'step.completed@210',
      'run.completed@210', 'state:completed@210',
    ]);
    // The lifecycle's history carries the same times as the state.changed events.
    const changes = events.filter((e) => e.type === 'state.changed').map((e) => e.at);
    expect(r.history.map((t) => t.at)).toEqual(changes);
  });

  it('with an onEvent listener, each event reads the clock after the listener of the one before', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: T0 });
    let moved = 0;
    const r = run('go', {
      model: clockModel(),
      tools: [clockTool],
      gate: clockGate,
      mode: { type: 'non-interactive', autoResponse: 'allow' },
      // Moves the clock 1 ms after each step.started: the state changes after it must show it.
      onEvent: (e) => {
        if (e.type === 'step.started') {
          moved++;
          vi.setSystemTime(Date.now() + 1);
        }
      },
    });
    const events = await collect(r);
    await r.outcome;
    const line = timeline(events);
    expect(line.slice(2, 5)).toEqual(['step.started@0', 'state:preparing_context@1', 'state:calling_model@1']);
    expect(line.slice(13, 16)).toEqual(['step.started@130', 'state:preparing_context@131', 'state:calling_model@131']);
    expect(moved).toBe(2);
  });
});
