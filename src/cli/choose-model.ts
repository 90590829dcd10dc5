import type { Model } from '../model/types.js';
import { defaultModelSpec } from '../runtime/default-models.js';
import { UsageError } from './usage-error.js';
import { parseModelSpec } from '../model/model-spec.js';
import { withRecovery } from '../model/recovery/with-recovery.js';
import { resolveModel } from '../model/resolve-model.js';
import { loadScriptedModel } from '../model/scripted-model.js';

/** `--model`, else the `model` setting, else the default of the key that is set (src/runtime/default-models.ts). */
export function chooseModelSpec(spec: string | undefined, settingsModel?: string): string {
  const chosen = spec ?? settingsModel ?? defaultModelSpec();
  if (!chosen) {
    throw new UsageError('No model chosen: set ANTHROPIC_API_KEY or OPENAI_API_KEY, or pass --model (e.g. --model scripted:<file.json>). `sage demo` runs offline with no key.');
  }
  return chosen;
}

/** Resolves `--model` (or a default from the keys set), wrapped in retries and a circuit breaker. */
export async function chooseModel(spec: string | undefined, options: { baseUrl?: string; settingsModel?: string } = {}): Promise<Model> {
  const chosen = chooseModelSpec(spec, options.settingsModel);
  // The same canonical parse as the server and the resolver: " scripted:x" is refused, not trimmed.
  const parsed = parseModelSpec(chosen);
  if (parsed.provider === 'scripted') {
    // The scripted model needs none of the provider SDKs (resolveModel requires them only when used).
    return loadScriptedModel(parsed.name);
  }
  const model = resolveModel(chosen, { baseUrl: options.baseUrl });
  return withRecovery(model, {});
}
