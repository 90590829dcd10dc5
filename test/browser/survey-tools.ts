import { z } from 'zod';
import { defineTool, type Tool } from '../../src/tool/types.js';

/**
 * Test tools whose execution is an interaction of the kinds no built-in tool asks: a combined
 * request (input + select + confirm) and a multi-select. Their result echoes the answer, so a test
 * can check what the page sent.
 */
export const surveyTool: Tool = defineTool({
  name: 'Survey',
  description: 'Asks a few setup questions at once.',
  inputSchema: z.object({}),
  risk: 'LOW',
  readOnly: true,
  requiresUserInteraction: true,
  async execute(_input, ctx) {
    const outcome = await ctx.interact({
      kind: 'combined',
      title: 'Set up the project',
      items: [
        { key: 'name', title: 'Project name', kind: 'input', required: true, placeholder: 'my-app' },
        { key: 'lang', title: 'Language', kind: 'select', options: [{ value: 'ts', label: 'TypeScript', description: 'typed JavaScript' }, { value: 'py', label: 'Python' }] },
        { key: 'ok', title: 'Create it now?', kind: 'confirm', confirmText: 'Yes, create', cancelText: 'Not yet' },
      ],
    });
    return outcome.status === 'answered' ? JSON.stringify(outcome.response.responses) : `not answered: ${outcome.status}`;
  },
});

export const pickTool: Tool = defineTool({
  name: 'Pick',
  description: 'Asks which targets to build.',
  inputSchema: z.object({}),
  risk: 'LOW',
  readOnly: true,
  requiresUserInteraction: true,
  async execute(_input, ctx) {
    const outcome = await ctx.interact({
      kind: 'select',
      title: 'Which targets?',
      description: 'Pick every target to build.',
      multiple: true,
      options: [{ value: 'web', label: 'Web' }, { value: 'cli', label: 'CLI', description: 'the sage command' }, { value: 'docs', label: 'Docs' }],
    });
    return outcome.status === 'answered' ? `selected: ${outcome.response.selected?.join(',')}` : `not answered: ${outcome.status}`;
  },
});

/** A form like an MCP elicitation's: optional items, a select and a yes/no with the server's defaults. */
export const formTool: Tool = defineTool({
  name: 'Form',
  description: 'Asks for a name; colour, age and subscription are optional.',
  inputSchema: z.object({}),
  risk: 'LOW',
  readOnly: true,
  requiresUserInteraction: true,
  async execute(_input, ctx) {
    const outcome = await ctx.interact({
      kind: 'combined',
      title: 'Who are you?',
      items: [
        { key: 'name', title: 'Name', kind: 'input' },
        { key: 'color', title: 'Colour', kind: 'select', optional: true, defaultSelected: ['blue'], options: [{ value: 'red', label: 'Red' }, { value: 'blue', label: 'Blue' }] },
        { key: 'age', title: 'Age', kind: 'input', optional: true },
        { key: 'subscribe', title: 'Subscribe?', kind: 'confirm', optional: true, defaultConfirmed: true },
      ],
    });
    return outcome.status === 'answered' ? JSON.stringify(outcome.response.responses) : `not answered: ${outcome.status}`;
  },
});
