import { describe, expect, test } from 'vitest';
import type { RunEvent } from '../events/index.js';
import { oneLine, renderEventLine } from './event-renderer.js';

// Only `type` and `data` are read by the line renderer; the rest of the envelope is irrelevant here.
const event = (type: string, data: Record<string, unknown>) => ({ type, data }) as unknown as RunEvent;

describe('one line per event (sage runs show / resume)', () => {
  test('a multi-line tool result stays on one line, with its newlines marked and its length capped', () => {
    const line = renderEventLine(event('tool.completed', { toolName: 'Bash', isError: false, content: `first\nsecond\n${'x'.repeat(400)}` }))!;
    expect(line.startsWith('  ← Bash: first ⏎ second ⏎ ')).toBe(true);
    expect(line).not.toContain('\n');
    expect(line.endsWith('…')).toBe(true);
  });

  test('a failed tool and a denied call are marked as such', () => {
    expect(renderEventLine(event('tool.completed', { toolName: 'Read', isError: true, content: 'no such file' }))).toBe('  ✖ Read: no such file');
    expect(renderEventLine(event('permission.decided', { toolName: 'Bash', behavior: 'deny', reason: 'deny rule Bash(rm *)' }))).toBe('  ⛔ Bash deny: deny rule Bash(rm *)');
  });

  test('an "ask" decision and unknown events print nothing (the question itself has its own line)', () => {
    expect(renderEventLine(event('permission.decided', { toolName: 'Bash', behavior: 'ask', reason: '' }))).toBeUndefined();
    expect(renderEventLine(event('message.delta', { text: 'partial' }))).toBeUndefined();
    expect(renderEventLine(event('interaction.requested', { request: { id: 'int_1', kind: 'confirm', title: 'Run Bash?' } }))).toBe('  ? Run Bash? — answer with: sage respond int_1 …');
  });

  test('oneLine cuts at the limit, counting the ellipsis', () => {
    expect(oneLine('abcdef', 4)).toBe('abc…');
    expect(oneLine('abc', 4)).toBe('abc');
  });
});
