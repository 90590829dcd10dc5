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

/**
 * The runtime every process of a test builds: the same tools, the model from its spec. `log` is
 * the file the side effects go to, or one file per run (many runs in one store).
 */
export function scenarioRuntime(log: string | ((runId: string) => string), afterAppend?: (runId: string, line: string) => void | Promise<void>): DurableRuntime {
  return {
    createModel: (spec) => loadScriptedModel(spec.replace(/^scripted:/, '')),
    tools:
      typeof log === 'string' && !afterAppend
        ? [appendLineTool(log), askUserQuestionTool]
        : (record) => [
            appendLineTool(typeof log === 'string' ? log : log(record.id), afterAppend && ((line) => afterAppend(record.id, line))),
            askUserQuestionTool,
          ],
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

/** One run of the batched crash driver: where it stops before the process is killed. */
export interface CrashCase {
  runId: string;
  /** Freeze the run right after its Nth boundary commit. */
  crashAfter?: number;
  /** Freeze the run inside AppendLine, after it appended this line and before its result is recorded. */
  freezeAfterAppend?: string;
}

/** Where a run's side effects go when many runs share one store (one file per run). */
export const caseLog = (dir: string, runId: string) => join(dir, `${runId}.log`);
