import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerLiveness, pidScope, processStartTime, thisProcess } from './owner-process.js';

const linux = process.platform === 'linux';

describe('ownerLiveness', () => {
  let child: ChildProcess;
  let exited: ChildProcess;
  beforeAll(async () => {
    child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    exited = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await new Promise((resolve) => exited.once('exit', resolve));
  });
  afterAll(() => {
    child.kill('SIGKILL');
  });

  it('takes this very process for alive', () => {
    expect(ownerLiveness(thisProcess())).toBe('alive');
  });

  it('takes a pid that no longer exists for dead', () => {
    expect(ownerLiveness({ ...thisProcess(), pid: exited.pid! })).toBe('dead');
  });

  it.runIf(linux)('takes a live process started at another time for dead (the pid was reused)', () => {
    const started = processStartTime(child.pid!);
    expect(started).toMatch(/^\d+$/);
    const owner = { ...thisProcess(), pid: child.pid!, startTime: String(Number(started) + 1) };
    expect(ownerLiveness(owner)).toBe('dead');
    expect(ownerLiveness({ ...owner, startTime: started })).toBe('alive');
  });

  it.runIf(linux)('takes an owner recorded under another boot of this host for dead', () => {
    expect(ownerLiveness({ ...thisProcess(), pid: child.pid!, bootId: 'another-boot' })).toBe('dead');
  });

  it.runIf(linux)('takes a killed process its parent has not reaped yet (a zombie) for dead', async () => {
    // The shell's background child is never waited for: the exec'd sleep is its parent now.
    const parent = spawn('sh', ['-c', 'sleep 60 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const pid = Number(await new Promise<string>((resolve) => parent.stdout!.once('data', (d: Buffer) => resolve(String(d)))));
      const owner = { ...thisProcess(), pid, startTime: processStartTime(pid) };
      expect(ownerLiveness(owner)).toBe('alive');
      process.kill(pid, 'SIGKILL');
      const deadline = Date.now() + 10_000;
      while (!/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(ownerLiveness(owner)).toBe('dead');
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it("leaves an owner of another host to its lease, even one whose pid is gone here", () => {
    expect(ownerLiveness({ ...thisProcess(), host: `${thisProcess().host}-elsewhere`, pid: exited.pid! })).toBe('unknown');
  });

  it('leaves a live pid with no recorded start time (not Linux) to its lease', () => {
    expect(ownerLiveness({ ...thisProcess(), pid: child.pid!, startTime: null, bootId: null })).toBe('unknown');
  });
});

describe('processStartTime', () => {
  const root = mkdtempSync(join(tmpdir(), 'sage-proc-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('counts fields from the last parenthesis: a command name with spaces and ")" does not shift them', () => {
    mkdirSync(join(root, '41'));
    const after = ['S', ...Array.from({ length: 18 }, (_, i) => String(i + 4)), '123456', '999'];
    writeFileSync(join(root, '41', 'stat'), `41 (a) b ) c) ${after.join(' ')}\n`);
    expect(processStartTime(41, root)).toBe('123456');
  });

  it('is null for a pid with no stat file', () => {
    expect(processStartTime(424242, root)).toBeNull();
  });
});

describe('pidScope', () => {
  it('names the pid namespace beside the host, so two containers sharing a host name do not judge each other', () => {
    const root = mkdtempSync(join(tmpdir(), 'sage-pidns-'));
    mkdirSync(join(root, 'self', 'ns'), { recursive: true });
    symlinkSync('pid:[4026532999]', join(root, 'self', 'ns', 'pid'));
    expect(pidScope('box', root)).toBe('box (pid ns 4026532999)');
    const other = { ...thisProcess(), host: pidScope(hostname(), root) };
    // This very pid, seen from another pid namespace: not ours to judge.
    expect(ownerLiveness(other)).toBe('unknown');
    expect(pidScope('box', join(root, 'missing'))).toBe('box');
  });
});
