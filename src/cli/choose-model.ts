import type { Model } from '../model/types.js';
import { UsageError } from './usage-error.js';

/** Models used when `--model` is not given, by the key that is set. */
const DEFAULTS: Array<{ variable: string; spec: string }> = [
  { variable: 'ANTHROPIC_API_KEY', spec: 'anthropic:claude-sonnet-4-5' },
  { variable: 'OPENAI_API_KEY', spec: 'openai:gpt-4.1' },
];

/** Resolves `--model` (or a default from the keys set), wrapped in retries and a circuit breaker. */
export async function chooseModel(spec: string | undefined, options: { baseUrl?: string; settingsModel?: string } = {}): Promise<Model> {
  const chosen = spec ?? options.settingsModel ?? DEFAULTS.find((d) => process.env[d.variable]?.trim())?.spec;
  if (!chosen) {
    throw new UsageError('No model chosen: set ANTHROPIC_API_KEY or OPENAI_API_KEY, or pass --model (e.g. --model scripted:<file.json>). `sage demo` runs offline with no key.');
  }
  // The same canonical parse as the server and the resolver: " scripted:x" is refused, not trimmed.
  const { parseModelSpec } = await import('../model/model-spec.js');
  const parsed = parseModelSpec(chosen);
  if (parsed.provider === 'scripted') {
    // The scripted model needs none of the provider SDKs: skip loading them (cold start).
    const { loadScriptedModel } = await import('../model/scripted-model.js');
    return loadScriptedModel(parsed.name);
  }
  const { resolveModel } = await import('../model/resolve-model.js');
  const model = resolveModel(chosen, { baseUrl: options.baseUrl });
  const { withRecovery } = await import('../model/recovery/with-recovery.js');
  return withRecovery(model, {});
}
