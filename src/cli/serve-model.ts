import { resolve } from 'node:path';
import { parseModelSpec, type ModelSpec } from '../model/model-spec.js';
import { resolveParsedModel } from '../model/resolve-model.js';
import { loadScriptedModel } from '../model/scripted-model.js';
import { UsageError } from './usage-error.js';

/**
 * The server's default model (`--model`, else `SAGE_MODEL`), checked at start as `sage run` checks
 * its own: a spec that does not parse, a scripted file that is missing or not a script, a provider
 * without its key is a usage error naming the problem, instead of a server whose every run fails.
 * A relative scripted file is read from `cwd`, as everywhere else on the command line; the spec
 * returned names it by its absolute path (the run policy allows that one file, src/runtime/run-policy.ts).
 * Undefined when there is no default: every client request must then name a model.
 */
export function checkServeModel(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  const source = flag !== undefined ? '--model' : 'SAGE_MODEL';
  const spec = flag ?? (env.SAGE_MODEL?.trim() ? env.SAGE_MODEL : undefined);
  if (spec === undefined) return undefined;
  let parsed: ModelSpec;
  try {
    parsed = parseModelSpec(spec);
  } catch (error) {
    throw new UsageError(`${source}: ${(error as Error).message}`);
  }
  if (parsed.provider === 'scripted') {
    const path = resolve(cwd, parsed.name);
    try {
      loadScriptedModel(path);
    } catch (error) {
      throw new UsageError(`${source} scripted:${parsed.name}: ${(error as Error).message}`);
    }
    return `scripted:${path}`;
  }
  try {
    resolveParsedModel(parsed, { env });
  } catch (error) {
    throw new UsageError(`${source} ${parsed.spec}: ${(error as Error).message}`);
  }
  return parsed.spec;
}
