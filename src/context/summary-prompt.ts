import type { Message } from '../model/types.js';
import { truncateToolResult } from './truncate-tool-result.js';

/** Per-item caps inside the transcript the summariser reads: enough to know what happened. */
const TOOL_RESULT_CHARS = 2_000;
const MESSAGE_CHARS = 8_000;

export const SUMMARY_SYSTEM_PROMPT = `You compress the history of a working session between a user and an AI agent that uses tools, so that the agent can carry on with only your summary in place of the history.

Write a summary that lets the agent continue without asking again. Include, as they apply:
- the user's task and every requirement, constraint or preference they stated (quote short ones exactly);
- decisions taken and why;
- files read, created or changed, with the state they were left in;
- commands run and what they showed, especially errors and how they were resolved;
- questions asked to the user and their answers;
- what is done, what is in progress and the next steps.
Keep identifiers exact: paths, function names, commands, ids, numbers. Leave out pleasantries and anything superseded.
Write in the language the user wrote in. Answer with the summary only.`;

/** The history as a plain transcript (tool calls and results written out), for a request with no tools. */
export function renderTranscript(messages: readonly Message[], maxChars: number): string {
  const lines: string[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        lines.push(`[system note]\n${cap(message.content, MESSAGE_CHARS)}`);
        break;
      case 'user':
        lines.push(`[user]\n${cap(message.content, MESSAGE_CHARS)}`);
        break;
      case 'assistant':
        if (message.content.length > 0) lines.push(`[agent]\n${cap(message.content, MESSAGE_CHARS)}`);
        for (const call of message.toolCalls ?? []) {
          const input = typeof call.input === 'string' ? call.input : JSON.stringify(call.input);
          lines.push(`[agent called tool ${call.name} (call ${call.id})]\n${cap(input ?? '', TOOL_RESULT_CHARS)}`);
        }
        break;
      case 'tool':
        lines.push(`[${message.isError ? 'error from' : 'result of'} tool ${message.toolName} (call ${message.toolCallId})]\n${cap(message.content, TOOL_RESULT_CHARS)}`);
        break;
    }
  }
  return cap(lines.join('\n\n'), maxChars);
}

export function summaryRequestText(transcript: string): string {
  return `Here is the session history to summarise, oldest first:\n\n<history>\n${transcript}\n</history>\n\nWrite the summary now.`;
}

/** The message that stands in for the summarised history. */
export function summaryMessage(summary: string, removedMessages: number): Message {
  return {
    role: 'user',
    content:
      `[Context summary] To fit the context window, the ${removedMessages} earliest messages of this session were replaced by this summary. ` +
      `Continue the task from where it stands; ask the user only about what the summary leaves unclear.\n\n<summary>\n${summary}\n</summary>`,
  };
}

function cap(text: string, maxChars: number): string {
  return truncateToolResult(text, maxChars, { hint: 'The cut part is not available; summarise what is shown.' });
}
