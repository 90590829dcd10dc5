import { describe, expect, it } from 'vitest';
import { editDistance, unknownCommandError } from './unknown-command.js';

const COMMANDS = ['run', 'demo', 'permissions', 'runs', 'respond', 'interactions', 'serve', 'help'];

describe('unknown commands', () => {
  it('names the word and lists the commands, as a usage error', () => {
    const error = unknownCommandError('frobnicate', COMMANDS);
    expect(error.code).toBe('usage_error');
    expect(error.message).toBe('unknown command "frobnicate". Commands: run, demo, permissions, runs, respond, interactions, serve, help (sage --help).');
  });

  it('suggests the closest command for a typo', () => {
    expect(unknownCommandError('rnus', COMMANDS).message).toContain('Did you mean "runs"?');
    expect(unknownCommandError('serv', COMMANDS).message).toContain('Did you mean "serve"?');
    expect(unknownCommandError('permisions', COMMANDS).message).toContain('Did you mean "permissions"?');
  });

  it('points a task typed as a command to sage run', () => {
    expect(unknownCommandError('fix the failing test', COMMANDS).message).toContain('To run a task: sage run "fix the failing test".');
  });

  it('measures edits', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('run', 'run')).toBe(0);
  });
});
