import { z } from 'zod';
import { ScriptedModel, type Script } from '../../model/scripted-model.js';
import type { Tool } from '../../tool/types.js';
import type { RunEvent } from '../../events/index.js';
import type { Run } from '../run.js';

export const script = (turns: Script['turns']): ScriptedModel => new ScriptedModel({ turns });

/** A tool that changes things (so the minimal gate asks) and records each execution. */
export function recordingTool(name = 'write_note', options: { readOnly?: boolean; delayMs?: number } = {}): Tool<{ text: string }> & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    name,
    description: `${name} tool`,
    inputSchema: z.object({ text: z.string() }),
    risk: 'MEDIUM',
    readOnly: options.readOnly ?? false,
    async execute(input, ctx) {
      if (options.delayMs) {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, options.delayMs);
          ctx.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(new Error('aborted'));
          }, { once: true });
        });
      }
      calls.push(input.text);
      return `${name}: ${input.text}`;
    },
  };
}

export async function collect(run: Run): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  for await (const event of run) events.push(event);
  return events;
}

export const types = (events: readonly RunEvent[]) => events.map((e) => e.type);
