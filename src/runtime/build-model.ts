import type { Model } from '../model/types.js';
import type { RunPolicy } from './run-policy.js';

// Loaded on first use, then kept: a resume rebuilds the model, and an import() per rebuild
// resolves the module again (a scripted run never loads the provider SDKs).
let specModule: Promise<typeof import('../model/model-spec.js')> | undefined;
let scriptedModule: Promise<typeof import('../model/scripted-model.js')> | undefined;
let resolveModule: Promise<typeof import('../model/resolve-model.js')> | undefined;
let recoveryModule: Promise<typeof import('../model/recovery/with-recovery.js')> | undefined;

/**
 * The one way a run's model is built from its spec, whoever starts or resumes it: through the
 * server's run policy when the run's surface takes its model from there (what clients may name),
 * else as named; every real provider wrapped in retries and a circuit breaker. A scripted model
 * needs none of the provider SDKs, so they are not loaded for it.
 */
export async function buildModel(spec: string, options: { baseUrl?: string; runPolicy?: RunPolicy } = {}): Promise<Model> {
  let model: Model;
  if (options.runPolicy) model = options.runPolicy.model(spec);
  else {
    // The same canonical parse as the server and the resolver: " scripted:x" is refused, not trimmed.
    const { parseModelSpec } = await (specModule ??= import('../model/model-spec.js'));
    const parsed = parseModelSpec(spec);
    if (parsed.provider === 'scripted') return (await (scriptedModule ??= import('../model/scripted-model.js'))).loadScriptedModel(parsed.name);
    const { resolveParsedModel } = await (resolveModule ??= import('../model/resolve-model.js'));
    model = resolveParsedModel(parsed, options.baseUrl ? { baseUrl: options.baseUrl } : {});
  }
  if (model.id.startsWith('scripted:')) return model;
  const { withRecovery } = await (recoveryModule ??= import('../model/recovery/with-recovery.js'));
  return withRecovery(model, {});
}
