import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { defineTool } from '../../tool/index.js';

/**
 * The side effect the crash tests count: appends `line` to a file. When SAGE_TEST_CRASH_AFTER_APPEND
 * names the line, the process kills itself with SIGKILL right after appending — between "executed"
 * and "recorded", the window intents exist for. `afterAppend` runs in that same window (the batched
 * crash driver freezes the run there until the whole process is killed).
 */
export function appendLineTool(file: string, afterAppend?: (line: string) => void | Promise<void>) {
  return defineTool({
    name: 'AppendLine',
    description: 'Appends a line to the log file.',
    inputSchema: z.object({ line: z.string() }),
    risk: 'MEDIUM',
    readOnly: false,
    async execute(input) {
      appendFileSync(file, `${input.line}\n`);
      if (process.env.SAGE_TEST_CRASH_AFTER_APPEND === input.line) process.kill(process.pid, 'SIGKILL');
      await afterAppend?.(input.line);
      return `appended ${input.line}`;
    },
  });
}
