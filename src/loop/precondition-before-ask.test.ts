import { describe, expect, it } from 'vitest';
import { utimesSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { InteractionRequest } from '../interaction/index.js';
import { editTool, readTool, writeTool } from '../tool/index.js';
import { useTempDirs } from '../tool/builtin/test-support/temp-dir.js';
import { run } from './run.js';
import { recordingTool, script } from './test-support/fixtures.js';

const tempDir = useTempDirs();

/** A non-interactive responder that approves everything and remembers what it was asked. */
function approvingRecorder() {
  const asked: InteractionRequest[] = [];
  return {
    asked,
    mode: {
      type: 'non-interactive' as const,
      autoResponse: (req: InteractionRequest) => {
        asked.push(req);
        return { requestId: req.id, kind: 'confirm' as const, confirmed: true };
      },
    },
  };
}

describe('a call that cannot run fails before a person is asked', () => {
  it('an Edit of a file the run has not read is not put to a person and the file stays as it was', async () => {
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'notes.txt'), 'alpha\n');
    const responder = approvingRecorder();
    const outcome = await run('edit', {
      cwd,
      model: script([{ toolCalls: [{ name: 'Edit', input: { file_path: 'notes.txt', old_string: 'alpha', new_string: 'beta' } }] }, { text: 'ok' }]),
      tools: [editTool],
      mode: responder.mode,
    }).outcome;
    expect(responder.asked).toEqual([]);
    expect(outcome.messages.find((m) => m.role === 'tool')!.content).toContain('has not been read in this run');
    expect(outcome.toolHistory[0]!.decision).toMatchObject({ behavior: 'deny', source: 'tool' });
    expect(await readFile(path.join(cwd, 'notes.txt'), 'utf8')).toBe('alpha\n');
  });

  it('an Edit whose old_string is not in the file is not put to a person', async () => {
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'notes.txt'), 'alpha\n');
    const responder = approvingRecorder();
    const outcome = await run('edit', {
      cwd,
      model: script([
        { toolCalls: [{ name: 'Read', input: { file_path: 'notes.txt' } }] },
        { toolCalls: [{ name: 'Edit', input: { file_path: 'notes.txt', old_string: 'gamma', new_string: 'beta' } }] },
        { text: 'ok' },
      ]),
      tools: [readTool, editTool],
      mode: responder.mode,
    }).outcome;
    expect(responder.asked).toEqual([]);
    expect(outcome.messages.filter((m) => m.role === 'tool')[1]!.content).toContain('old_string was not found');
  });

  it('a Write over a file changed on disk since it was read is not put to a person', async () => {
    const cwd = await tempDir();
    const file = path.join(cwd, 'notes.txt');
    await writeFile(file, 'alpha\n');
    const responder = approvingRecorder();
    const changeOnDisk = recordingTool('touch_file');
    changeOnDisk.readOnly = true;
    changeOnDisk.execute = async () => {
      await writeFile(file, 'changed by someone else\n');
      const { utimes } = await import('node:fs/promises');
      await utimes(file, new Date(), new Date(Date.now() + 5_000));
      return 'touched';
    };
    const outcome = await run('write', {
      cwd,
      model: script([
        { toolCalls: [{ name: 'Read', input: { file_path: 'notes.txt' } }] },
        { toolCalls: [{ name: 'touch_file', input: { text: '' } }] },
        { toolCalls: [{ name: 'Write', input: { file_path: 'notes.txt', content: 'mine\n' } }] },
        { text: 'ok' },
      ]),
      tools: [readTool, writeTool, changeOnDisk],
      mode: responder.mode,
    }).outcome;
    expect(responder.asked.map((r) => r.kind === 'confirm' && r.toolName)).toEqual([]);
    expect(outcome.messages.filter((m) => m.role === 'tool')[2]!.content).toContain('modified on disk since you last read it');
    expect(await readFile(file, 'utf8')).toBe('changed by someone else\n');
  });

  it('an Edit that can run is still put to a person, and runs once approved', async () => {
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'notes.txt'), 'alpha\n');
    const responder = approvingRecorder();
    await run('edit', {
      cwd,
      model: script([
        { toolCalls: [{ name: 'Read', input: { file_path: 'notes.txt' } }] },
        { toolCalls: [{ name: 'Edit', input: { file_path: 'notes.txt', old_string: 'alpha', new_string: 'beta' } }] },
        { text: 'ok' },
      ]),
      tools: [readTool, editTool],
      mode: responder.mode,
    }).outcome;
    expect(responder.asked.map((r) => r.kind === 'confirm' && r.toolName)).toEqual(['Edit']);
    expect(await readFile(path.join(cwd, 'notes.txt'), 'utf8')).toBe('beta\n');
  });

  it('a file changed while the person was deciding still stops the Edit: execute checks again', async () => {
    const cwd = await tempDir();
    const file = path.join(cwd, 'notes.txt');
    await writeFile(file, 'alpha\n');
    const outcome = await run('edit', {
      cwd,
      model: script([
        { toolCalls: [{ name: 'Read', input: { file_path: 'notes.txt' } }] },
        { toolCalls: [{ name: 'Edit', input: { file_path: 'notes.txt', old_string: 'alpha', new_string: 'beta' } }] },
        { text: 'ok' },
      ]),
      tools: [readTool, editTool],
      mode: {
        type: 'non-interactive',
        autoResponse: (req) => {
          writeFileSync(file, 'alpha, changed meanwhile\n');
          utimesSync(file, new Date(), new Date(Date.now() + 5_000));
          return { requestId: req.id, kind: 'confirm', confirmed: true };
        },
      },
    }).outcome;
    expect(outcome.messages.filter((m) => m.role === 'tool')[1]!.content).toContain('modified on disk since you last read it');
    expect(await readFile(file, 'utf8')).toBe('alpha, changed meanwhile\n');
  });

  it('a call the gate denies is reported as denied by the gate, not as a failed precondition', async () => {
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'notes.txt'), 'alpha\n');
    const outcome = await run('edit', {
      cwd,
      model: script([{ toolCalls: [{ name: 'Edit', input: { file_path: 'notes.txt', old_string: 'alpha', new_string: 'beta' } }] }, { text: 'ok' }]),
      tools: [editTool],
      gate: { decide: () => ({ behavior: 'deny', reason: 'Edit is denied by the rule Edit(*)', source: 'rule', rule: 'Edit(*)' }) },
      mode: { type: 'non-interactive', autoResponse: 'allow' },
    }).outcome;
    expect(outcome.toolHistory[0]!.decision).toMatchObject({ behavior: 'deny', source: 'rule' });
    expect(outcome.messages.find((m) => m.role === 'tool')!.content).toContain('Permission denied');
  });
});
