import { z } from 'zod';
import { questionSchema, type Question } from '../../interaction/index.js';
import { defineTool } from '../types.js';

const inputSchema = z.object({
  questions: z
    .array(questionSchema)
    .min(1, 'ask 1-4 questions')
    .max(4, 'ask 1-4 questions')
    .refine((qs) => new Set(qs.map((q) => q.question)).size === qs.length, 'each question text must be unique'),
});

/** Formats answers the way Claude Code's AskUserQuestion reports them to the model. */
export function formatAnswers(questions: readonly Question[], answers: Record<string, string | string[]>): string {
  const parts = questions.map((q) => {
    const value = answers[q.question];
    const text = Array.isArray(value) ? value.join(', ') : (value ?? '');
    return `"${q.question}"="${text}"`;
  });
  return `User answered: ${parts.join(', ')}. You can now continue with the user's answers in mind.`;
}

/**
 * AskUserQuestion: the model asks 1-4 multiple-choice questions; the person may
 * also give a free "Other" answer. Its execution is the interaction, so the gate does not ask.
 */
export const askUserQuestionTool = defineTool({
  name: 'AskUserQuestion',
  description:
    'Ask the user 1-4 multiple-choice questions when you need their decision or preference. Each question has a short header (max 12 chars), 2-4 options with a label and a description, and multiSelect when several answers may apply. The user can always answer "Other" with free text.',
  inputSchema,
  risk: 'LOW',
  readOnly: true,
  requiresUserInteraction: true,
  async execute(input, ctx) {
    const outcome = await ctx.interact({
      kind: 'questions',
      title: input.questions.length === 1 ? input.questions[0]!.question : 'The agent has questions',
      questions: input.questions,
      toolCallId: ctx.toolCallId,
      toolName: 'AskUserQuestion',
    });
    if (outcome.status !== 'answered') {
      return {
        content: `The user did not answer (${outcome.reason}); the question was cancelled. Proceed without an answer or ask again later.`,
        isError: true,
      };
    }
    return { content: formatAnswers(input.questions, outcome.response.answers ?? {}), data: outcome.response.answers };
  },
});
