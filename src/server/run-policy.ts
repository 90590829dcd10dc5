import { existsSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { InvalidInputError } from '../errors/index.js';
import { resolveModel } from '../model/resolve-model.js';
import type { Model } from '../model/types.js';

/** What clients may choose when they start a run: models and working directories. */
export interface RunPolicyOptions {
  /** Directories runs may work in; `cwd` must be inside one. Default: the process's cwd. */
  roots?: readonly string[];
  /** The model when a request names none (e.g. `anthropic:claude-sonnet-4-5`); default `env.SAGE_MODEL`. */
  defaultModel?: string;
  /** `scripted:<file>` models read a file named by the client: allowed only for tests and demos. */
  allowScriptedModels?: boolean;
  /** Override model resolution (custom providers). */
  resolveModel?: (spec: string) => Model;
  env?: NodeJS.ProcessEnv;
}

/**
 * Checks a client's choices against the server's policy. A client names a model spec and a
 * directory; the server decides whether it may (a scripted model reads a file the client names,
 * a cwd outside the roots would let tools act anywhere on the disk).
 */
export class RunPolicy {
  readonly roots: string[];

  constructor(private readonly options: RunPolicyOptions = {}) {
    this.roots = (options.roots ?? [process.cwd()]).map((r) => resolve(r));
  }

  modelSpec(requested: string | undefined): string {
    const spec = requested ?? this.options.defaultModel ?? this.options.env?.['SAGE_MODEL'] ?? process.env['SAGE_MODEL'];
    if (!spec) throw new InvalidInputError('No model: pass "model" (e.g. "anthropic:claude-sonnet-4-5") or start the server with SAGE_MODEL.', { field: 'model' });
    return spec;
  }

  /** Resolves a spec to a model, refusing what the policy forbids; errors name the `model` field. */
  model(spec: string): Model {
    if (spec.startsWith('scripted:') && !this.options.allowScriptedModels) {
      throw new InvalidInputError('Scripted models are disabled on this server.', { field: 'model' });
    }
    try {
      return this.options.resolveModel ? this.options.resolveModel(spec) : resolveModel(spec, { env: this.options.env });
    } catch (error) {
      throw new InvalidInputError((error as Error).message, { field: 'model', cause: error });
    }
  }

  cwd(requested: string | undefined): string {
    const cwd = requested === undefined ? this.roots[0]! : resolve(this.roots[0]!, requested);
    const inside = this.roots.some((root) => {
      const rel = relative(root, cwd);
      return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
    });
    if (!inside) throw new InvalidInputError(`The working directory must be inside ${this.roots.join(' or ')}.`, { field: 'cwd' });
    if (!existsSync(cwd) || !statSync(cwd).isDirectory()) throw new InvalidInputError(`The working directory ${cwd} does not exist.`, { field: 'cwd' });
    return cwd;
  }
}
