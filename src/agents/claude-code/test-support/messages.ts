import type { RecordedRequest } from '../../../testing/fake-providers/index.js';

/**
 * The newest *user* message of a Messages API request, as content blocks. Claude Code may append a
 * system-role block after the user's turn, so the last message is not always the user's.
 */
export function lastUserBlocks(request: RecordedRequest): Array<Record<string, unknown>> {
  const messages = (request.body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
  const last = [...messages].reverse().find((m) => m.role === 'user');
  if (!last) return [];
  return typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : (last.content as Array<Record<string, unknown>>);
}
