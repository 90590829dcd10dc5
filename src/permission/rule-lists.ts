import type { RuleSpec } from './engine-options.js';

/**
 * Rule specs from allow / ask / deny lists as flags and stored run options carry them
 * (deny first, then ask, then allow; the engine's order decides anyway).
 */
export function rulesFromLists(lists: { allow?: readonly string[]; ask?: readonly string[]; deny?: readonly string[] }, source: string): RuleSpec[] {
  return [
    ...(lists.deny ?? []).map((rule) => ({ rule, behavior: 'deny' as const, source })),
    ...(lists.ask ?? []).map((rule) => ({ rule, behavior: 'ask' as const, source })),
    ...(lists.allow ?? []).map((rule) => ({ rule, behavior: 'allow' as const, source })),
  ];
}
