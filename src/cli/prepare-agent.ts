import { platform } from 'node:os';
import type { RunOptions } from '../loop/index.js';
import type { Model } from '../model/types.js';
import type { Tool } from '../tool/types.js';

export interface PreparedAgent {
  model: Model;
  system: string;
  prepareMessages?: RunOptions['prepareMessages'];
}

/**
 * The system prompt (environment, AGENTS.md / SAGE.md, tools) and auto-compaction for a CLI run.
 * Scripted models are not compacted: they pick their turn by counting assistant messages, which a
 * summary would change.
 */
export async function prepareAgent(model: Model, tools: readonly Tool[], cwd: string): Promise<PreparedAgent> {
  const { buildSystemPrompt, loadProjectInstructions, createAutoCompaction } = await import('../context/index.js');
  const specs = tools.map((t) => ({ name: t.name, description: t.description, inputSchema: {} }));
  const system = buildSystemPrompt({
    cwd,
    platform: platform(),
    date: new Date(),
    tools: specs,
    projectInstructions: await loadProjectInstructions(cwd),
  });
  if (model.id.startsWith('scripted:')) return { model, system };
  const compaction = createAutoCompaction({ model, system });
  return { model: compaction.model, system, prepareMessages: compaction.prepareMessages };
}
