import type { RunRecord } from '../store/index.js';
import { subagentMetaSchema, type SubagentMeta } from '../subagents/index.js';

/**
 * The subagent metadata of a run: undefined for a run that is no subagent; a subagent run whose
 * metadata does not validate throws (its gate could not be chosen: fail closed).
 */
export function subagentOf(run: RunRecord): SubagentMeta | undefined {
  const origin = run.options['origin'] as { surface?: unknown } | undefined;
  const raw = (run.options['metadata'] as Record<string, unknown> | undefined)?.['subagent'];
  if (origin?.surface !== 'subagent' && raw === undefined) return undefined;
  const parsed = subagentMetaSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`run ${run.id} is a subagent run whose metadata.subagent does not validate (${parsed.error.issues[0]?.message ?? 'invalid'})`);
  return parsed.data;
}
