import { describe, expect, it } from 'vitest';
import { parseChatCommand } from './commands.js';

describe('parseChatCommand', () => {
  it('reads typed and tapped approval commands, with a reason for a denial', () => {
    expect(parseChatCommand('/approve k3f9 once')).toEqual({ type: 'approve', id: 'k3f9', decision: 'once' });
    expect(parseChatCommand('/approve@sage_bot k3 always')).toEqual({ type: 'approve', id: 'k3', decision: 'always' });
    expect(parseChatCommand('/approve k3 deny not on prod')).toEqual({ type: 'approve', id: 'k3', decision: 'deny', reason: 'not on prod' });
    expect(parseChatCommand('/deny k3 too risky')).toEqual({ type: 'approve', id: 'k3', decision: 'deny', reason: 'too risky' });
    expect(parseChatCommand('/approve k3')).toEqual({ type: 'approve', id: 'k3', decision: 'once' });
    expect(parseChatCommand('/approve k3 maybe').type).toBe('bad');
    expect(parseChatCommand('/approve').type).toBe('bad');
  });

  it('bare yes/no in English and Chinese, and nothing else', () => {
    for (const yes of ['yes', 'Y', 'ok', 'approve', '好', '好的', '是', '确认', '批准', '同意', 'yes!', '好的。']) expect(parseChatCommand(yes)).toEqual({ type: 'yes' });
    for (const no of ['no', 'N', 'deny', '不', '否', '拒绝']) expect(parseChatCommand(no)).toEqual({ type: 'no' });
    for (const text of ['yes please delete it', 'nope', '不要删除', 'okay then, run the tests']) expect(parseChatCommand(text)).toEqual({ type: 'text', text });
  });

  it('session commands and other slash text', () => {
    expect(parseChatCommand('/stop').type).toBe('stop');
    expect(parseChatCommand('/status').type).toBe('status');
    expect(parseChatCommand('/new').type).toBe('new');
    expect(parseChatCommand('/answer q1 2')).toEqual({ type: 'answer', id: 'q1', value: '2' });
    expect(parseChatCommand('/help me')).toEqual({ type: 'text', text: '/help me' });
  });
});
