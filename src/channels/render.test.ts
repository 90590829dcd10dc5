import { describe, expect, it } from 'vitest';
import type { InteractionRecord } from '../store/index.js';
import type { AskContext } from '../runtime/ask-context.js';
import { renderFeishuCard } from './feishu/render.js';
import { renderInteraction } from './render.js';
import { renderSlackBlocks } from './slack/render.js';

const record = {
  id: 'run_1:c1:permission', runId: 'run_1', toolCallId: 'c1', kind: 'confirm', status: 'pending',
  request: { id: 'run_1:c1:permission', runId: 'run_1', kind: 'confirm', title: 'Allow Bash?', createdAt: '2026-01-01T00:00:00.000Z', toolName: 'Bash', input: { command: 'npm publish' }, metadata: { risk: 'MEDIUM' } },
  response: null, answeredBy: null, answeredAt: null, reason: null, expiresAt: null, createdAt: '2026-01-01T00:00:00.000Z', closedAt: null, consumed: false,
} as InteractionRecord;

const context: AskContext = { task: 'Fix add() and publish', folder: 'calc', asker: { kind: 'agent', name: 'Claude Code' }, risk: 'MEDIUM', mode: 'default' };
const LINE = '“Fix add() and publish” · in calc · asked by Claude Code · mode default';

describe('renderInteraction with the context of the ask', () => {
  it('puts the task, folder, asker and mode right under the header, and the context on the approval', () => {
    const rendered = renderInteraction(record, {}, context)!;
    const lines = rendered.text.split('\n');
    expect(lines[0]).toMatch(/^🔐 Approval \[\w+\] Bash — risk MEDIUM$/);
    expect(lines[1]).toBe(LINE);
    expect(rendered.approval.context).toEqual(context);
  });

  it('reaches the Slack blocks and the Feishu card, which carry the text', () => {
    const rendered = renderInteraction(record, {}, context)!;
    expect(JSON.stringify(renderSlackBlocks(rendered.text, rendered.approval))).toContain('Fix add() and publish');
    expect(JSON.stringify(renderFeishuCard(rendered.text, rendered.approval))).toContain('Fix add() and publish');
  });

  it('a question gets the line too', () => {
    const question = { ...record, kind: 'select', request: { id: 'q', runId: 'run_1', kind: 'select', title: 'Which target?', createdAt: record.createdAt, options: [{ value: 'a', label: 'A' }] } } as InteractionRecord;
    expect(renderInteraction(question, {}, context)!.text.split('\n')[1]).toBe(LINE);
  });

  it('without a context (its run is gone) the message is as before', () => {
    const rendered = renderInteraction(record, {})!;
    expect(rendered.text).not.toContain('asked by');
    expect(rendered.approval.context).toBeUndefined();
  });
});
