import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadScriptedModel, ScriptedModel } from './scripted-model.js';
import type { ModelStreamPart } from './types.js';

const dir = mkdtempSync(join(tmpdir(), 'sage-script-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

async function parts(model: ScriptedModel, assistantTurns: number): Promise<ModelStreamPart[]> {
  const messages = [{ role: 'user' as const, content: 'go' }, ...Array.from({ length: assistantTurns }, () => ({ role: 'assistant' as const, content: '' }))];
  const out: ModelStreamPart[] = [];
  for await (const part of model.stream({ messages, tools: [] })) out.push(part);
  return out;
}

describe('scripted model', () => {
  it('returns the turn that follows the assistant turns already in the conversation, streamed in chunks', async () => {
    const model = loadScriptedModel(file('ok.json', JSON.stringify({ turns: [{ text: 'first' }, { text: 'a second, longer reply text', toolCalls: [{ name: 'Bash', input: { command: 'ls' } }] }] })));
    const second = await parts(model, 1);
    const deltas = second.filter((p) => p.type === 'text-delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((p) => (p as { text: string }).text).join('')).toBe('a second, longer reply text');
    expect(second.find((p) => p.type === 'tool-call')).toMatchObject({ call: { name: 'Bash', input: { command: 'ls' } } });
    expect(second.at(-1)).toMatchObject({ type: 'finish', finishReason: 'tool-calls' });
  });

  it('fails clearly past the last turn', async () => {
    const model = new ScriptedModel({ turns: [{ text: 'only' }] });
    await expect(parts(model, 1)).rejects.toThrow('The script has 1 turn(s) and the run asked for turn 2');
  });

  it('refuses a malformed file with its path and the problem', () => {
    expect(() => loadScriptedModel(file('bad.json', '{ "turns": ['))).toThrow(/bad\.json is not valid JSON/);
    expect(() => loadScriptedModel(file('empty-turn.json', JSON.stringify({ turns: [{}] })))).toThrow(/empty-turn\.json: turns\.0: a turn needs "text" or at least one tool call/);
    expect(() => loadScriptedModel(file('extra.json', JSON.stringify({ turns: [{ text: 'x', tools: [] }] })))).toThrow(/extra\.json: turns\.0: Unrecognized key/);
    expect(() => loadScriptedModel(join(dir, 'missing.json'))).toThrow(/Cannot read the script .*missing\.json: ENOENT/);
  });
});
