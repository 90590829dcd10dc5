import { describe, expect, it } from 'vitest';
import { reasonLine } from './reason-line.js';

describe('reasonLine', () => {
  it('leaves out the command a Bash reason quotes: the command is shown once, beside it', () => {
    const request = { toolName: 'Bash', input: { command: 'rm -rf build' }, reason: 'Bash command `rm -rf build` is HIGH risk and no rule allows it; a person must approve.' };
    expect(reasonLine(request)).toBe('Bash command is HIGH risk and no rule allows it; a person must approve.');
  });

  it('keeps a reason that quotes no command, and only its first line', () => {
    expect(reasonLine({ toolName: 'Write', input: { file_path: 'a.txt' }, reason: 'Write on a.txt is MEDIUM risk.\nmore' })).toBe('Write on a.txt is MEDIUM risk.');
    expect(reasonLine({ toolName: 'Bash', input: { command: 'ls' }, description: 'Asked by a hook.' })).toBe('Asked by a hook.');
  });
});
