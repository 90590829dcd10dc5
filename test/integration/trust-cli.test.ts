import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

let dir: string;
let project: string;
const env = () => ({ SAGE_HOME: join(dir, 'home'), SAGE_DATABASE_URL: '' });
const trustFile = () => join(dir, 'home', '.sage', 'trusted-folders.json');
const trusted = (): unknown => (existsSync(trustFile()) ? (JSON.parse(readFileSync(trustFile(), 'utf8')) as { folders: unknown }).folders : []);
const write = (file: string, text: string) => {
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, text);
};

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-trust-cli-')));
  project = join(dir, 'project');
  mkdirSync(project);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('sage trust', () => {
  it('trusts the current folder and says what that turns on: settings, hooks, MCP servers, agents and skills', async () => {
    write(join(project, '.sage', 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash(npm test)'] }, hooks: { PreToolUse: [] } }));
    write(join(project, '.mcp.json'), JSON.stringify({ mcpServers: { tracker: { command: 'tracker' } } }));
    write(join(project, '.sage', 'agents', 'reviewer.md'), '---\nname: reviewer\n---\n');
    write(join(project, '.claude', 'skills', 'lint', 'SKILL.md'), '---\nname: lint\n---\n');
    const result = await runCli(['trust'], { cwd: project, env: env() });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Trusted: ${project}`);
    expect(result.stdout).toContain(join(project, '.sage', 'settings.json'));
    expect(result.stdout).toContain('1 allow rule;');
    expect(result.stdout).toMatch(/hooks: PreToolUse/);
    expect(result.stdout).toContain(`tracker (${join(project, '.mcp.json')})`);
    expect(result.stdout).toContain(join(project, '.sage', 'agents', 'reviewer.md'));
    expect(result.stdout).toContain(join(project, '.claude', 'skills', 'lint'));
    expect(result.stdout).toContain(`sage trust --revoke ${project}`);
    expect(trusted()).toEqual([project]);
    // The folder's MCP servers no longer wait for trust.
    const mcp = JSON.parse((await runCli(['mcp', 'list', '--json'], { cwd: project, env: env() })).stdout) as { waitingForTrust: unknown[] };
    expect(mcp.waitingForTrust).toEqual([]);
  });

  it('trusts the real folder behind a symlink, once', async () => {
    const link = join(dir, 'link');
    symlinkSync(project, link);
    expect((await runCli(['trust', link], { env: env() })).stdout).toContain(`Trusted: ${project}`);
    const again = await runCli(['trust', project], { env: env() });
    expect(again.stdout).toContain(`Already trusted: ${project}`);
    expect(trusted()).toEqual([project]);
  });

  it('refuses a folder that does not exist, or a file, with exit 2 and trusts nothing', async () => {
    const missing = await runCli(['trust', join(dir, 'nope')], { env: env() });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`no such folder: ${join(dir, 'nope')}`);
    write(join(dir, 'file.txt'), 'x');
    const file = await runCli(['trust', join(dir, 'file.txt')], { env: env() });
    expect(file.code).toBe(2);
    expect(file.stderr).toContain('not a folder');
    expect(trusted()).toEqual([]);
  });

  it('lists trusted folders, as text and as JSON, and revokes one (saying when it was not trusted)', async () => {
    const other = join(dir, 'other');
    mkdirSync(other);
    expect((await runCli(['trust', '--list'], { env: env() })).stdout).toContain('No trusted folders');
    await runCli(['trust', project], { env: env() });
    await runCli(['trust', other], { env: env() });
    expect((await runCli(['trust', '--list'], { env: env() })).stdout).toBe(`${project}\n${other}\n`);
    expect(JSON.parse((await runCli(['trust', '--list', '--json'], { env: env() })).stdout)).toEqual({ folders: [project, other] });
    const revoked = await runCli(['trust', '--revoke', project], { env: env() });
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain(`No longer trusted: ${project}`);
    expect(trusted()).toEqual([other]);
    const again = await runCli(['trust', '--revoke', project], { env: env() });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`Was not trusted: ${project}`);
    expect(trusted()).toEqual([other]);
  });

  it('revokes a folder that no longer exists by the path it was trusted under', async () => {
    const gone = join(dir, 'gone');
    mkdirSync(gone);
    await runCli(['trust', gone], { env: env() });
    rmSync(gone, { recursive: true });
    expect((await runCli(['trust', '--list'], { env: env() })).stdout).toContain(`${gone}  (missing)`);
    expect((await runCli(['trust', '--revoke', gone], { env: env() })).stdout).toContain(`No longer trusted: ${gone}`);
    expect(trusted()).toEqual([]);
  });

  it('refuses a folder together with --list or --revoke, and --json without --list, with exit 2', async () => {
    for (const args of [['trust', project, '--list'], ['trust', project, '--revoke', project], ['trust', '--json']]) {
      const result = await runCli(args, { env: env() });
      expect(result.code, args.join(' ')).toBe(2);
    }
    expect(trusted()).toEqual([]);
  });
});

describe('sage permissions allow in an untrusted folder', () => {
  for (const scope of ['project', 'local'] as const) {
    it(`--scope ${scope} still writes the rule and warns that it waits for sage trust`, async () => {
      const result = await runCli(['permissions', 'allow', 'Bash(npm test)', '--scope', scope, '--cwd', project], { env: env() });
      expect(result.code).toBe(0);
      const file = join(project, '.sage', scope === 'project' ? 'settings.json' : 'settings.local.json');
      expect(JSON.parse(result.stdout)).toEqual({ added: 'Bash(npm test)', behavior: 'allow', to: file });
      expect((JSON.parse(readFileSync(file, 'utf8')) as { permissions: { allow: string[] } }).permissions.allow).toEqual(['Bash(npm test)']);
      expect(result.stderr).toContain(`${project} is not trusted`);
      expect(result.stderr).toContain(`sage trust ${project}`);
    });
  }

  it('says nothing once the folder is trusted, nor for a deny rule or the user scope', async () => {
    const deny = await runCli(['permissions', 'deny', 'Read(.env)', '--scope', 'project', '--cwd', project], { env: env() });
    expect(deny.stderr).toBe('');
    const user = await runCli(['permissions', 'allow', 'Bash(ls)', '--scope', 'user', '--cwd', project], { env: env() });
    expect(user.stderr).toBe('');
    await runCli(['trust', project], { env: env() });
    const allowed = await runCli(['permissions', 'allow', 'Bash(npm test)', '--scope', 'project', '--cwd', project], { env: env() });
    expect(allowed.code).toBe(0);
    expect(allowed.stderr).toBe('');
  });

  it("a written allow rule decides nothing until sage trust, then allows the call; revoking takes it back", async () => {
    await runCli(['permissions', 'allow', 'Bash(npm test)', '--scope', 'project', '--cwd', project], { env: env() });
    const check = async () => (JSON.parse((await runCli(['permissions', 'check', '--tool', 'Bash', '--input', '{"command":"npm test"}', '--cwd', project], { env: env() })).stdout) as { behavior: string }).behavior;
    expect(await check()).not.toBe('allow');
    await runCli(['trust', project], { env: env() });
    expect(await check()).toBe('allow');
    await runCli(['trust', '--revoke', project], { env: env() });
    expect(await check()).not.toBe('allow');
  });

  it('no warning through a symlink to a trusted folder', async () => {
    const link = join(dir, 'link');
    symlinkSync(project, link);
    await runCli(['trust', project], { env: env() });
    const result = await runCli(['permissions', 'allow', 'Bash(ls)', '--scope', 'local', '--cwd', link], { env: env() });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
  });

  it('--list of a broken trust file says no folder is trusted because of it (exit 1), not that there are none', async () => {
    write(trustFile(), '{ broken');
    const result = await runCli(['trust', '--list'], { env: env() });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`${trustFile()} is not valid JSON, so no folder is trusted`);
  });
});
