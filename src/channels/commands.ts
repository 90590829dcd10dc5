/**
 * What a chat message means to the core, decided before anything reaches the agent (the
 * inbound approval check runs before a message is queued, so a "yes" never reaches the agent
 * as text). Taps arrive as the same text commands, so there is one parser.
 */
export type ChatCommand =
  | { type: 'approve'; id: string; decision: 'once' | 'always' | 'deny'; reason?: string }
  | { type: 'answer'; id: string; value: string }
  | { type: 'yes' }
  | { type: 'no' }
  | { type: 'stop' }
  | { type: 'status' }
  | { type: 'new' }
  | { type: 'bad'; message: string }
  | { type: 'text'; text: string };

const YES = new Set(['yes', 'y', 'ok', 'okay', 'approve', '好', '好的', '是', '确认', '批准', '同意']);
const NO = new Set(['no', 'n', 'deny', '不', '否', '拒绝']);
const DECISIONS: Record<string, 'once' | 'always' | 'deny'> = { once: 'once', allow: 'once', yes: 'once', always: 'always', deny: 'deny', no: 'deny', reject: 'deny' };

/** A bare yes or no, trimmed, case-folded, trailing punctuation (ASCII and CJK) ignored. */
function bare(text: string): string {
  return text.trim().toLowerCase().replace(/[.!。！~～\s]+$/u, '');
}

export function parseChatCommand(raw: string): ChatCommand {
  const text = raw.trim();
  // A command may be addressed to a bot in a group (`/approve@sage_bot …`, Telegram).
  const match = /^\/([a-z]+)(?:@\S+)?(?:\s+([\s\S]*))?$/i.exec(text);
  if (match) {
    const name = match[1]!.toLowerCase();
    const rest = (match[2] ?? '').trim();
    const words = rest.split(/\s+/).filter(Boolean);
    switch (name) {
      case 'approve':
      case 'deny': {
        const id = words[0];
        if (!id) return { type: 'bad', message: `Usage: /approve <id> once|always|deny [reason]` };
        const word = name === 'deny' ? 'deny' : (words[1]?.toLowerCase() ?? 'once');
        const decision = DECISIONS[word];
        if (!decision) return { type: 'bad', message: `"${word}" is not an answer: use /approve ${id} once, /approve ${id} always or /approve ${id} deny [reason].` };
        const reasonWords = name === 'deny' ? words.slice(1) : words.slice(2);
        const reason = reasonWords.join(' ').trim();
        return { type: 'approve', id, decision, ...(reason ? { reason } : {}) };
      }
      case 'answer': {
        const id = words[0];
        const value = rest.slice(id?.length ?? 0).trim();
        if (!id || !value) return { type: 'bad', message: 'Usage: /answer <id> <option number or text>' };
        return { type: 'answer', id, value };
      }
      case 'stop':
        return { type: 'stop' };
      case 'status':
        return { type: 'status' };
      case 'new':
        return { type: 'new' };
      default:
        // Any other slash text (`/help`, a path) is the agent's to read.
        return { type: 'text', text };
    }
  }
  const word = bare(text);
  if (YES.has(word)) return { type: 'yes' };
  if (NO.has(word)) return { type: 'no' };
  return { type: 'text', text };
}
