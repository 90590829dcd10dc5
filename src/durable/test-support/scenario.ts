import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadScriptedModel } from '../../model/scripted-model.js';
import { askUserQuestionTool } from '../../tool/index.js';
import type { InteractionRecord } from '../../store/index.js';
import type { DurableRuntime } from '../runtime.js';
import { appendLineTool } from './append-line-tool.js';

/**
 * The scripted run the durability tests drive: four side effects across three model turns, with a
 * permission ask per append, a question in the middle, and the closing "next message" input.
 */
export const scenarioScript = {
  turns: [
    { toolCalls: [{ name: 'AppendLine', input: { line: 'a' } }] },
    {
      toolCalls: [
        {
          name: 'AskUserQuestion',
          input: { questions: [{ question: 'Which color?', header: 'Color', options: [{ label: 'red' }, { label: 'blue' }] }] },
        },
        { name: 'AppendLine', input: { line: 'b' } },
      ],
    },
    { toolCalls: [{ name: 'AppendLine', input: { line: 'c' } }, { name: 'AppendLine', input: { line: 'd' } }] },
    { text: 'All four lines are written.' },
  ],
};
export const SCENARIO_LINES = ['a', 'b', 'c', 'd'];

/** Writes the script and returns the paths a test (and its child processes) share. */
export function writeScenario(dir: string): { scriptPath: string; logPath: string; model: string } {
  const scriptPath = join(dir, 'script.json');
  const logPath = join(dir, 'appended.log');
  writeFileSync(scriptPath, JSON.stringify(scenarioScript));
  writeFileSync(logPath, '');
  return { scriptPath, logPath, model: `scripted:${scriptPath}` };
}

/** The runtime every process of a test builds: the same tools, the model from its spec. */
export function scenarioRuntime(logPath: string): DurableRuntime {
  return {
    createModel: (spec) => loadScriptedModel(spec.replace(/^scripted:/, '')),
    tools: [appendLineTool(logPath), askUserQuestionTool],
  };
}

/** The answer a person gives in the tests: approve, pick the first option, send no next message. */
export function answerFor(interaction: InteractionRecord, userId = 'tester'): Record<string, unknown> {
  const request = interaction.request;
  switch (request.kind) {
    case 'confirm':
      return { kind: 'confirm', confirmed: true, userId };
    case 'questions':
      return { kind: 'questions', answers: Object.fromEntries(request.questions.map((q) => [q.question, q.options[0]!.label])), userId };
    case 'input':
      return { kind: 'input', text: '', userId };
    default:
      throw new Error(`the scenario never asks a ${request.kind}`);
  }
}

export function appendedLines(logPath: string): string[] {
  return readFileSync(logPath, 'utf8').split('\n').filter(Boolean);
}
