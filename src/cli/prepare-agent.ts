import type { RunOptions } from '../loop/index.js';
import type { Model } from '../model/types.js';
import type { Tool } from '../tool/types.js';

export interface PreparedAgent {
  model: Model;
  system: string;
  prepareMessages?: RunOptions['prepareMessages'];
}

/**
 * The system prompt (environment, AGENTS.md / SAGE.md, tools) and auto-compaction for an in-memory
 * run (`--ephemeral`, `sage demo`).
 * Scripted models are not compacted: they pick their turn by counting assistant messages, which a
 * summary would change.
 */
export async function prepareAgent(model: Model, tools: readonly Tool[], cwd: string): Promise<PreparedAgent> {
  // The same prompt as every stored run (src/runtime/create-run.ts).
  const [{ systemPrompt }, { createAutoCompaction }] = await Promise.all([import('../runtime/create-run.js'), import('../context/index.js')]);
  const system = await systemPrompt(cwd, tools);
  if (model.id.startsWith('scripted:')) return { model, system };
  const compaction = createAutoCompaction({ model, system });
  return { model: compaction.model, system, prepareMessages: compaction.prepareMessages };
}
