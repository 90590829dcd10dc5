import { describe, expect, it } from 'vitest';
import type { InteractionRequest } from '../interaction/index.js';
import type { RunRecord } from '../store/index.js';
import { askContext, askContextFor, askContextLine, folderLabel, taskLine, type AskedRequest } from './ask-context.js';

const HOME = '/home/ann';

function run(id: string, task: string, options: Record<string, unknown>): RunRecord {
  return {
    id, status: 'suspended', userId: 'ann', sessionId: 's', channel: 'cli', task, options, owner: null, epoch: 1,
    leaseExpiresAt: null, pendingInteractionId: null, finalText: null, error: null,
    createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z', finishedAt: null,
  };
}

function ask(runId: string, extra: Partial<InteractionRequest> = {}): AskedRequest {
  const request = { id: `${runId}:c1:permission`, runId, kind: 'confirm', title: 'Allow Bash?', createdAt: '2026-01-01T00:00:00.000Z', toolName: 'Bash', input: { command: 'rm -rf build' }, reason: 'Bash command `rm -rf build` is HIGH risk', metadata: { risk: 'HIGH' }, ...extra } as InteractionRequest;
  return { runId, request };
}

const v2 = (extra: Record<string, unknown> = {}) => ({
  version: 2, model: 'scripted:/x.json', cwd: '/home/ann/src/calc/pkg', projectRoot: '/home/ann/src/calc',
  origin: { surface: 'terminal', startedBy: 'ann' }, permissions: { rules: [], ignoreBrokenSettings: false }, ...extra,
});

describe('taskLine', () => {
  it('is the first non-empty line of the task, clipped to 80 characters', () => {
    expect(taskLine('\n  Fix add() and publish  \nThe add function subtracts.')).toBe('Fix add() and publish');
    const long = taskLine('x'.repeat(200));
    expect(long).toHaveLength(80);
    expect(long.endsWith('…')).toBe(true);
  });
});

describe('folderLabel', () => {
  it('names a folder by its project: project/sub, or the project alone at its root', () => {
    expect(folderLabel('/home/ann/src/calc/pkg', '/home/ann/src/calc', HOME)).toBe('calc/pkg');
    expect(folderLabel('/home/ann/src/calc', '/home/ann/src/calc', HOME)).toBe('calc');
  });

  it('abbreviates the home folder as ~ when the folder is in no project, or the project is home or /', () => {
    expect(folderLabel('/home/ann/notes', undefined, HOME)).toBe('~/notes');
    expect(folderLabel('/home/ann/notes', HOME, HOME)).toBe('~/notes');
    expect(folderLabel('/home/ann', '/', HOME)).toBe('~');
    expect(folderLabel('/srv/data', '/home/ann/src/calc', HOME)).toBe('/srv/data');
  });
});

describe('askContext', () => {
  it('gives the task, the folder, the run as asker, the risk and the mode of a terminal run', () => {
    const r = run('run_1', 'Fix add() and publish\nmore', v2({ permissions: { mode: 'acceptEdits', rules: [], ignoreBrokenSettings: false } }));
    const context = askContext(r, ask('run_1'));
    expect(context).toEqual({ task: 'Fix add() and publish', folder: expect.stringMatching(/calc\/pkg$/), asker: { kind: 'run' }, risk: 'HIGH', mode: 'acceptEdits' });
    expect(askContextLine(context, { risk: true })).toBe('“Fix add() and publish” · in calc/pkg · asked by the run · HIGH risk · mode acceptEdits');
  });

  it('says when asks are answered automatically (--auto allow) or denied (batch)', () => {
    expect(askContext(run('r', 't', v2({ mode: 'non-interactive', autoResponse: 'allow' })), ask('r')).mode).toBe('default (--auto allow)');
    expect(askContext(run('r', 't', v2({ mode: 'batch' })), ask('r')).mode).toBe('default (batch)');
  });

  it("reads a web run's mode from its stored metadata", () => {
    const web = run('r', 't', v2({ origin: { surface: 'web', startedBy: 'ann' }, metadata: { permissionMode: 'plan', allow: [] } }));
    expect(askContext(web, ask('r')).mode).toBe('plan');
  });

  it('names the external agent that asks (Claude Code), not the run', () => {
    const agent = run('r', 'Port the parser', v2({ model: 'agent:claude-code', agent: { name: 'claude-code', command: ['claude'] } }));
    expect(askContext(agent, ask('r')).asker).toEqual({ kind: 'agent', name: 'Claude Code' });
  });

  it("shows a subagent's ask with the root run's task (the subagent's own task is a prompt for a model)", async () => {
    const root = run('run_root', 'Fix add() and publish', v2());
    const sub = run('run_root.task.c1', 'You are an explorer. Find every caller of add() and report their files.', v2({
      origin: { surface: 'subagent', startedBy: 'ann', parentRunId: 'run_root' },
      metadata: { subagent: { type: 'Explore', description: 'find callers', toolCallId: 'c1', parentRunId: 'run_root', rootRunId: 'run_root', rootSurface: 'terminal', depth: 1 } },
    }));
    const runs = new Map([root, sub].map((r) => [r.id, r]));
    const context = await askContextFor({ getRun: async (id) => runs.get(id) }, ask(sub.id, { agent: { id: sub.id, type: 'Explore' } }));
    expect(context?.task).toBe('Fix add() and publish');
    expect(context?.asker).toEqual({ kind: 'subagent', name: 'Explore' });
  });

  it('still gives a context for a run whose stored options no longer validate', () => {
    const broken = run('r', 'Old run', { model: '', cwd: '/home/ann/x', metadata: { permissionMode: 'plan' } });
    expect(askContext(broken, ask('r'))).toMatchObject({ task: 'Old run', asker: { kind: 'run' }, mode: 'plan' });
  });

  it('is undefined for an ask whose run is gone', async () => {
    await expect(askContextFor({ getRun: async () => undefined }, ask('gone'))).resolves.toBeUndefined();
  });
});
