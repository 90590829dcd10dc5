import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
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

  it('says where a JSON syntax error is, never what the file holds', () => {
    const secret = file('passwd', 'root:x:0:0:root:/root:/bin/bash\n');
    const error = (() => {
      try {
        loadScriptedModel(secret);
      } catch (e) {
        return e as Error;
      }
      throw new Error('loaded');
    })();
    expect(error.message).toMatch(/passwd is not valid JSON: a syntax error/);
    expect(error.message).not.toMatch(/root|bash|x:0/);
    expect(() => loadScriptedModel(file('trailing.json', '{\n  "turns": [],\n}'))).toThrow(/line 3, column 1/);
    expect(() => loadScriptedModel(file('short.json', '{"turns": ['))).toThrow(/it ends early/);
  });

  it('names no unknown key of the file (only how many there are)', () => {
    expect(() => loadScriptedModel(file('keys.json', JSON.stringify({ turns: [{ text: 'x' }], aws_secret_access_key: 'AKIA', password: 'hunter2' })))).toThrow(
      /keys\.json: \(root\): Unrecognized key\(s\): 2 field\(s\)/,
    );
    expect(() => loadScriptedModel(file('keys2.json', JSON.stringify({ turns: [{ text: 'x' }], password: 'hunter2' })))).not.toThrow(/password|hunter2/);
  });

  it('refuses /dev/zero, /dev/null and a folder without reading them, and a file over the cap', () => {
    expect(() => loadScriptedModel('/dev/zero')).toThrowError(expect.objectContaining({ problem: 'not_a_file' }));
    expect(() => loadScriptedModel('/dev/null')).toThrowError(expect.objectContaining({ problem: 'not_a_file' }));
    expect(() => loadScriptedModel(dir)).toThrowError(expect.objectContaining({ problem: 'not_a_file', message: expect.stringMatching(/not a regular file/) }));
    const big = file('big.json', JSON.stringify({ turns: [{ text: 'x'.repeat(2_000) }] }));
    expect(() => loadScriptedModel(big, { maxBytes: 1_000 })).toThrowError(expect.objectContaining({ problem: 'too_large', message: expect.stringMatching(/larger than 1000 bytes/) }));
    expect(loadScriptedModel(big, { maxBytes: 4_000 }).script.turns).toHaveLength(1);
  });

  it('with allowed folders, refuses a path that leaves them, directly or through a symlink', () => {
    const allowed = join(dir, 'allowed');
    mkdirSync(allowed, { recursive: true });
    const inside = join(allowed, 'ok.json');
    writeFileSync(inside, JSON.stringify({ turns: [{ text: 'fine' }] }));
    const outsideFile = file('outside.json', JSON.stringify({ turns: [{ text: 'outside' }] }));
    symlinkSync(outsideFile, join(allowed, 'link.json'));
    symlinkSync(dir, join(allowed, 'up'));
    expect(loadScriptedModel(inside, { within: [allowed] }).script.turns[0]!.text).toBe('fine');
    for (const path of [outsideFile, join(allowed, 'link.json'), join(allowed, 'up', 'outside.json'), join(allowed, '..', 'outside.json')]) {
      expect(() => loadScriptedModel(path, { within: [allowed] })).toThrowError(expect.objectContaining({ problem: 'outside' }));
    }
  });
});
