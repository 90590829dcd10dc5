import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshWorkDir, root, runCli } from '../support/cli.js';

describe('the scripted sample the README and --help point to (demo/turns.json)', () => {
  it('runs with no key: looks at the folder, writes NOTES.md once approved, and completes', async () => {
    const cwd = freshWorkDir();
    const result = await runCli(['run', 'take notes', '--model', `scripted:${join(root, 'demo', 'turns.json')}`, '--json', '--non-interactive', '--auto', 'allow'], { cwd });
    expect(result.code).toBe(0);
    const events = result.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });
    expect(events.filter((e) => e.type === 'tool.completed').map((e) => e.data['toolName'])).toEqual(['Glob', 'Write']);
    expect(events.some((e) => e.type === 'interaction.answered')).toBe(true);
    expect(events.at(-2)?.type).toBe('run.completed');
    expect(readFileSync(join(cwd, 'NOTES.md'), 'utf8')).toContain('Written by Sage\'s scripted model');
  });

  it('with --batch the write is refused and the run still completes, the file unwritten', async () => {
    const cwd = freshWorkDir();
    const result = await runCli(['run', 'take notes', '--model', `scripted:${join(root, 'demo', 'turns.json')}`, '--batch'], { cwd });
    expect(result.code).toBe(0);
    expect(() => readFileSync(join(cwd, 'NOTES.md'))).toThrow();
  });
});
