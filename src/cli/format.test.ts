import { describe, expect, it } from 'vitest';
import { modelTexts } from '../loop/model-texts.js';
import { deniedForPerson, forPerson } from './format.js';

describe('text for a person at the terminal', () => {
  it('a rule denial reads once, without the instructions written for the model', () => {
    const reason = 'Bash(rm -rf build) is denied by the rule Bash(rm:*) (projectSettings), which matches rm -rf build. Do not retry it in another form; ask the person or choose another approach.';
    const shown = deniedForPerson({ source: 'rule', reason });
    expect(shown).toBe('Not run: Bash(rm -rf build) is denied by the rule Bash(rm:*) (projectSettings), which matches rm -rf build.');
    expect(forPerson(modelTexts.deniedByGate('Bash', { command: 'rm -rf build' }, reason))).not.toContain('Do not retry');
  });

  it('a person\'s own denial is told back to them, with their message', () => {
    expect(deniedForPerson({ source: 'user', reason: 'denied by the user' })).toBe('You denied it.');
    expect(deniedForPerson({ source: 'user', reason: 'denied by the user: use npm test' })).toBe('You denied it. Your message to the agent: "use npm test"');
  });

  it('a failed precondition says what is wrong once', () => {
    expect(deniedForPerson({ source: 'tool', reason: 'not run: /p/a.txt exists but has not been read in this run. Use the Read tool on it first, then try again.' })).toBe('Not run: /p/a.txt exists but has not been read in this run. Use the Read tool on it first, then try again.');
  });

  it('an answer to a question keeps the answers and drops the steering sentence', () => {
    expect(forPerson('User answered: "Which database?"="SQLite". You can now continue with the user\'s answers in mind.')).toBe('User answered: "Which database?"="SQLite".');
  });
});
