import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, writeScript } from '../support/cli.js';
import { TmuxSession } from '../support/tmux-session.js';

const hasTmux = (() => {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const ENTER = 'Enter';

describe.skipIf(!hasTmux && !process.env.CI)('sage in a real terminal (tmux)', { timeout: 60_000 }, () => {
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
    expect(session.screen()).toContain('+  return total / values.length;');
    session.keys(ENTER);
    // The same command again is allowed by the session's approval memory (MEDIUM risk: asked once).
    const screen = await session.waitFor('Done');
    expect(screen).toContain('4 passed, 0 failed');
    expect(screen.split('Bash wants permission').length - 1).toBe(1);
    expect(await session.exitCode()).toBe(0);
  });

  it('deny with a message: the model reads the message', async () => {
    session = new TmuxSession(['demo', '--verbose']);
    await session.choose('Deny and tell the agent why');
    await session.waitFor('Message to the agent');
    session.type('use the npm script instead');
    session.keys(ENTER);
    const screen = await session.waitFor('You denied it');
    expect(screen).toContain('Your message to the agent: "use the npm script instead"');
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
    const denied = await session.waitFor('You denied it');
    expect(denied).toContain('Your message to the agent: "The user pressed Ctrl+C to reject this request."');
    await session.waitFor('❯ Divide by length');
    session.keys('C-c');
    const screen = await session.waitFor('Cancelled');
    expect(screen).toContain('Cancelling the run');
    expect(await session.exitCode()).toBe(130);
  });

  it('edit the input, then allow: the edited command runs', async () => {
    session = new TmuxSession(['demo', '--expand']);
    await session.waitFor('❯ Allow once');
    await session.choose('Edit the input, then allow');
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

describe.skipIf(!hasTmux && !process.env.CI)('allow always (tmux)', { timeout: 60_000 }, () => {
  let session: TmuxSession | undefined;
  afterEach(() => session?.kill());

  it('saves the rule to the chosen settings file, and the next run needs no one', async () => {
    const project = mkdtempSync(join(tmpdir(), 'sage-always-'));
    const home = mkdtempSync(join(tmpdir(), 'sage-home-'));
    const script = writeScript([{ toolCalls: [{ name: 'Bash', input: { command: 'touch made-by-agent.txt' } }] }, { text: 'Touched.' }]);
    session = new TmuxSession(['run', 'touch a file', '--model', `scripted:${script}`, '--cwd', project], { cwd: project, env: { SAGE_HOME: home } });
    await session.choose('Allow always: Bash(touch made-by-agent.txt)');
    await session.choose('In this project, just for me');
    await session.waitFor('Done');
    expect(await session.exitCode()).toBe(0);
    const settings = JSON.parse(readFileSync(join(project, '.sage/settings.local.json'), 'utf8'));
    expect(settings.permissions.allow).toContain('Bash(touch made-by-agent.txt)');
    // Without a terminal, a folder's own allow rules wait for trust: the run needs a person and fails.
    const untrusted = await runCli(['run', 'touch a file', '--model', `scripted:${script}`, '--cwd', project], { env: { SAGE_HOME: home } });
    expect(untrusted.stderr).toContain('is not applied until this folder is trusted');
    expect(untrusted.code).toBe(1);
    // In a terminal the person is asked to trust the folder once; then the saved rule allows the call.
    session.kill();
    session = new TmuxSession(['run', 'touch a file', '--model', `scripted:${script}`, '--cwd', project], { cwd: project, env: { SAGE_HOME: home } });
    await session.choose('Yes, trust it');
    const screen = await session.waitFor('Done');
    expect(screen).not.toContain('Bash wants permission');
    expect(await session.exitCode()).toBe(0);
    const trustedRun = await runCli(['run', 'touch a file', '--model', `scripted:${script}`, '--cwd', project], { env: { SAGE_HOME: home } });
    expect(trustedRun.stderr).not.toContain('settings warning');
    expect(trustedRun.code).toBe(0);
  });
});

describe.skipIf(!hasTmux && !process.env.CI)('interactive session (tmux)', { timeout: 60_000 }, () => {
  let session: TmuxSession | undefined;
  afterEach(() => session?.kill());

  it('keeps the conversation across messages, answers /help, and ends with /exit', async () => {
    const script = writeScript([{ text: 'First reply: hello.' }, { text: 'Second reply: still here.' }]);
    session = new TmuxSession(['--model', `scripted:${script}`]);
    await session.waitFor('/help for commands');
    session.type('hi there');
    session.keys('Enter');
    await session.waitFor('First reply: hello.');
    await session.waitForCount('›', 2);
    session.type('/help');
    session.keys('Enter');
    await session.waitFor('end the session');
    session.type('tell me more');
    session.keys('Enter');
    await session.waitFor('Second reply: still here.');
    session.type('/exit');
    session.keys('Enter');
    await session.waitFor('Done');
    expect(await session.exitCode()).toBe(0);
  });
});
