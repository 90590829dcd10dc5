import type { Tool } from '../tool/types.js';

/** The built-in tools every CLI run gets. */
export async function loadTools(): Promise<Tool[]> {
  const { builtinTools } = await import('../tool/builtin/index.js');
  return builtinTools();
}
