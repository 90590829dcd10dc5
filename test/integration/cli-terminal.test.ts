import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { TmuxSession } from '../support/cli.js';

const hasTmux = (() => {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const ENTER = 'Enter';
const DOWN = 'Down';

describe.skipIf(!hasTmux && !process.env.CI)('sage in a real terminal (tmux)', () => {
  let session: TmuxSession | undefined;
  afterEach(() => session?.kill());

  it('demo: approve the command, answer the question, approve the edit, and the tests pass', async () => {
    session = new TmuxSession(['demo']);
    await session.waitFor('Bash wants permission');
    expect(session.screen()).toContain('$ node test.js');
    session.keys(ENTER); // Allow once
    await session.waitFor('How should I fix average()?');
    session.keys(ENTER); // first option
    await session.waitFor('Edit wants permission');
    expect(session.screen()).toContain('+ return total / values.length;');
    session.keys(ENTER);
    await session.waitForCount('Bash wants permission', 2);
    session.keys(ENTER);
    const screen = await session.waitFor('Done');
    expect(screen).toContain('4 passed, 0 failed');
    expect(await session.exitCode()).toBe(0);
  });

  it('deny with a message: the model reads the message', async () => {
    session = new TmuxSession(['demo', '--verbose']);
    await session.waitFor('Bash wants permission');
    const choices = session.screen();
    const denyIndex = ['Allow once', 'Edit the input, then allow', 'Deny', 'Deny and tell the agent why'].filter((c) => choices.includes(c)).indexOf('Deny and tell the agent why');
    for (let i = 0; i < denyIndex; i++) session.keys(DOWN);
    session.keys(ENTER);
    await session.waitFor('Message to the agent');
    session.type('use the npm script instead');
    session.keys(ENTER);
    await session.waitFor('The user said: "use the npm script instead"');
    session.keys('C-c');
    await session.waitFor('Rejected (Ctrl+C)');
    session.keys('C-c');
    expect(await session.exitCode()).toBe(130);
  });

  it('Ctrl+C at a prompt rejects that request; a second Ctrl+C cancels the run', async () => {
    session = new TmuxSession(['demo']);
    await session.waitFor('Bash wants permission');
    session.keys('C-c');
    await session.waitFor('Rejected (Ctrl+C)');
    await session.waitFor('The user denied Bash');
    await session.waitFor('How should I fix average()?');
    session.keys('C-c');
    const screen = await session.waitFor('Cancelled');
    expect(screen).toContain('Cancelling the run');
    expect(await session.exitCode()).toBe(130);
  });

  it('edit the input, then allow: the edited command runs', async () => {
    session = new TmuxSession(['demo', '--expand']);
    await session.waitFor('Bash wants permission');
    session.keys(DOWN);
    await session.waitFor(/❯ Edit the input/);
    session.keys(ENTER);
    await session.waitFor('Command');
    session.keys('End');
    session.type(' && echo EDITED-BY-HUMAN');
    session.keys(ENTER);
    const screen = await session.waitFor('EDITED-BY-HUMAN');
    expect(screen).toContain('the user edited the input');
    session.keys('C-c');
    await session.waitFor('Rejected');
    session.keys('C-c');
    expect(await session.exitCode()).toBe(130);
  });
});
