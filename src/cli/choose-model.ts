import type { Model } from '../model/types.js';
import { defaultModelSpec } from '../runtime/default-models.js';
import { UsageError } from './usage-error.js';
import { buildModel } from '../runtime/build-model.js';

/** `--model`, else the `model` setting, else the default of the key that is set (src/runtime/default-models.ts). */
export function chooseModelSpec(spec: string | undefined, settingsModel?: string): string {
  const chosen = spec ?? settingsModel ?? defaultModelSpec();
  if (!chosen) {
    throw new UsageError('No model chosen: set ANTHROPIC_API_KEY or OPENAI_API_KEY, or pass --model (e.g. --model scripted:<file.json>). `sage demo` runs offline with no key.');
  }
  return chosen;
}

/** Resolves `--model` (or a default from the keys set) as every run's model is built (src/runtime/build-model.ts). */
export async function chooseModel(spec: string | undefined, options: { baseUrl?: string; settingsModel?: string } = {}): Promise<Model> {
  const chosen = chooseModelSpec(spec, options.settingsModel);
  return buildModel(chosen, options.baseUrl ? { baseUrl: options.baseUrl } : {});
}
