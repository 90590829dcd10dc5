/** Text the model reads when a call did not run as asked. Written for the model: what, why, what next. */

const show = (toolName: string, input: unknown) => {
  const json = JSON.stringify(input);
  return `${toolName}(${json && json.length > 200 ? `${json.slice(0, 200)}…` : json})`;
};

export const modelTexts = {
  unknownTool: (name: string, known: readonly string[]) =>
    `Error: there is no tool named "${name}". Available tools: ${known.join(', ') || 'none'}.`,
  invalidInput: (name: string, problems: string) =>
    `Error: the input for ${name} is invalid: ${problems}. Fix the input and call the tool again.`,
  unparsableInput: (name: string, problem: string) =>
    `Error: the arguments for ${name} were not valid JSON (${problem}). Send the arguments as a JSON object matching the tool's schema.`,
  deniedByGate: (toolName: string, input: unknown, reason: string, rule?: string) =>
    `Permission denied: ${show(toolName, input)} was not run. ${reason}${rule ? ` (rule: ${rule})` : ''}. Do not retry the same call; choose another way or ask the user.`,
  deniedByUser: (toolName: string, input: unknown, message?: string) =>
    `The user denied ${show(toolName, input)}; it was not run.${message ? ` The user said: "${message}".` : ''} Do not retry it unchanged; adjust your approach or ask the user.`,
  askTimedOut: (toolName: string, reason: string) =>
    `${toolName} was not run: ${reason} to the permission request. This is not a denial by the user; continue without it or ask again later.`,
  askCancelled: (toolName: string, reason: string) =>
    `${toolName} was not run: the permission request was cancelled (${reason}).`,
  batchDenied: (toolName: string, reason: string) =>
    `${toolName} was not run: it needs a person's approval (${reason}), and this run is in batch mode where no person can answer. Continue without it.`,
  cascadeRejected: (toolName: string, rejected: string) =>
    `${toolName} was not run: the user rejected ${rejected} earlier in this turn, so the remaining calls that needed approval were cancelled.`,
  editedInput: (input: unknown) =>
    `Note: the user edited the input before approving; it ran with ${JSON.stringify(input)}.`,
  interruptedByRestart: (toolName: string) =>
    `${toolName} was interrupted by a restart while it was running; whether its side effect happened is unknown. Check the current state before retrying.`,
  preconditionFailed: (toolName: string, problem: string) => `Error: ${toolName} was not run: ${problem}`,
  toolThrew: (toolName: string, message: string) => `Error: ${toolName} failed: ${message}`,
  toolTimedOut: (toolName: string, ms: number) => `Error: ${toolName} did not finish within ${Math.round(ms / 1000)} s and was stopped.`,
} as const;
