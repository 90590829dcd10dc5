import type { ToolCall } from '../types.js';

/** How much of malformed arguments the model is shown back: enough to spot the mistake. */
const ECHO_LIMIT = 500;

/**
 * A provider tool call carries its arguments as JSON text. Text that does not parse to an object
 * keeps the raw text as `input` and sets `inputError`, written for the model: the loop answers
 * the call with that error so the model can call again, and the run goes on.
 */
export function parseToolCall(call: { toolCallId: string; toolName: string; input: string }): ToolCall {
  const raw = call.input.trim() === '' ? '{}' : call.input;
  let input: unknown;
  try {
    input = JSON.parse(raw);
  } catch (error) {
    return {
      id: call.toolCallId,
      name: call.toolName,
      input: call.input,
      inputError:
        `The arguments you sent for "${call.toolName}" are not valid JSON (${(error as Error).message}). ` +
        `You sent: ${echo(call.input)}. Call the tool again with one JSON object that matches its input schema.`,
    };
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return {
      id: call.toolCallId,
      name: call.toolName,
      input,
      inputError: `The arguments for "${call.toolName}" must be a JSON object, but you sent ${echo(raw)}. Call the tool again with an object that matches its input schema.`,
    };
  }
  return { id: call.toolCallId, name: call.toolName, input };
}

function echo(text: string): string {
  return text.length > ECHO_LIMIT ? `${text.slice(0, ECHO_LIMIT)}… (${text.length} characters in all)` : text;
}
