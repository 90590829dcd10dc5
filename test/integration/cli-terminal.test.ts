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
    await session.waitForPrompt('Edit wants permission', 1);
    expect(session.screen()).toContain('+ return total / values.length;');
    session.keys(ENTER);
    await session.waitForPrompt('Bash wants permission', 2);
    session.keys(ENTER);
    const screen = await session.waitFor('Done');
    expect(screen).toContain('4 passed, 0 failed');
    expect(await session.exitCode()).toBe(0);
  });

  it('deny with a message: the model reads the message', async () => {
    session = new TmuxSession(['demo', '--verbose']);
    await session.waitFor('Deny and tell the agent why');
    for (let i = 0; i < 6 && !/❯ Deny and tell the agent why/.test(session.screen()); i++) {
      session.keys(DOWN);
      await new Promise((r) => setTimeout(r, 100));
    }
    await session.waitFor(/❯ Deny and tell the agent why/);
    session.keys(ENTER);
    await session.waitFor('Message to the agent');
    session.type('use the npm script instead');
    session.keys(ENTER);
    const screen = await session.waitFor('The user denied Bash');
    expect(screen).toContain('The user said: "use the npm script instead"');
    await session.waitFor('❯ Divide by length');
    session.keys('C-c');
    await session.waitFor('Rejected (Ctrl+C)');
    session.keys('C-c');
    expect(await session.exitCode()).toBe(130);
  });

  it('Ctrl+C at a prompt rejects that request; a second Ctrl+C cancels the run', async () => {
    session = new TmuxSession(['demo']);
    await session.waitFor('❯ Allow once');
    session.keys('C-c');
    await session.waitFor('Rejected (Ctrl+C)');
    const denied = await session.waitFor('The user denied Bash');
    expect(denied).toContain('The user said: "The user pressed Ctrl+C to reject this request."');
    await session.waitFor('❯ Divide by length');
    session.keys('C-c');
    const screen = await session.waitFor('Cancelled');
    expect(screen).toContain('Cancelling the run');
    expect(await session.exitCode()).toBe(130);
  });

  it('edit the input, then allow: the edited command runs', async () => {
    session = new TmuxSession(['demo', '--expand']);
    await session.waitFor('❯ Allow once');
    session.keys(DOWN);
    await session.waitFor(/❯ Edit the input/);
    session.keys(ENTER);
    await session.waitFor('Command');
    session.keys('End');
    session.type(' && echo EDITED-BY-HUMAN');
    session.keys(ENTER);
    const screen = await session.waitFor('the user edited the input');
    expect(screen).toMatch(/EDITED-BY-HUMAN\s*\n/); // the command's own output, not only the prompt's echo
    await session.waitFor('❯ Divide by length');
    session.keys('C-c');
    await session.waitFor('Rejected');
    session.keys('C-c');
    expect(await session.exitCode()).toBe(130);
  });
});
