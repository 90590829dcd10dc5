import { realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { InvalidInputError } from '../errors/index.js';
import { parseModelSpec, type ModelSpec } from '../model/model-spec.js';
import { resolveParsedModel } from '../model/resolve-model.js';
import { isInsideFolder, MAX_SCRIPT_BYTES } from '../model/script-file.js';
import { loadScriptedModel, ScriptFormatError } from '../model/scripted-model.js';
import type { Model } from '../model/types.js';
import { ServerConfigError } from './errors.js';
import { findProjectRoot } from '../permission/project-folders.js';

/** What clients may choose when they start a run: models and working directories. */
export interface RunPolicyOptions {
  /** Directories runs may work in; `cwd` must be inside one (after symlinks are resolved). Default: the process's cwd. */
  roots?: readonly string[];
  /** The model when a request names none (e.g. `anthropic:claude-sonnet-4-5`); default `env.SAGE_MODEL`. */
  defaultModel?: string;
  /**
   * `scripted:<file>` models read a file named by the client: off unless this is true or
   * `scriptedDirs` is set. True alone means files under the `roots`.
   */
  allowScriptedModels?: boolean;
  /** Folders scripted model files may be read from (setting any turns scripted models on). */
  scriptedDirs?: readonly string[];
  /** Largest scripted model file read, bytes. Default 1 MiB. */
  maxScriptBytes?: number;
  /** Override how a (non-scripted) canonical spec becomes a model, e.g. to pass a custom fetch. */
  resolveModel?: (spec: string) => Model;
  env?: NodeJS.ProcessEnv;
}

/** The one answer a client gets for any scripted file that is refused: no existence or type oracle. */
export const NOT_ALLOWED_SCRIPT = 'The model is not an allowed scripted model file.';

/** A configured folder's real path, or a startup error naming it. */
function realFolder(dir: string, what: string): string {
  let real: string;
  try {
    real = realpathSync(resolve(dir));
  } catch {
    throw new ServerConfigError(`The ${what} ${dir} does not exist or cannot be read.`);
  }
  if (!statSync(real).isDirectory()) throw new ServerConfigError(`The ${what} ${dir} is not a directory.`);
  return real;
}

function realPathOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** The real path of a `scripted:<absolute path>` default model's file; undefined for anything else. */
function operatorScript(spec: string | undefined): string | undefined {
  if (!spec) return undefined;
  let parsed: ModelSpec;
  try {
    parsed = parseModelSpec(spec);
  } catch {
    return undefined;
  }
  return parsed.provider === 'scripted' && isAbsolute(parsed.name) ? realPathOrUndefined(parsed.name) : undefined;
}

/**
 * Checks a client's choices against the server's policy. A client names a model spec and a
 * directory; the server decides whether it may (a scripted model reads a file the client names,
 * a cwd outside the roots would let tools act anywhere on the disk). Both are decided on real
 * paths: the roots, the cwd and the script are resolved with realpath first, so a symlink inside
 * a root cannot lead out of it.
 */
export class RunPolicy {
  /** The roots' real paths. */
  readonly roots: string[];
  /** Real folders scripted model files may come from; empty: scripted models are off. */
  readonly scriptedDirs: string[];
  /**
   * The real path of the default model's file when the operator chose a `scripted:` one by its
   * absolute path (`sage serve --model`, checked at start): runs that name no model get it, so it
   * is read whether or not client scripted models are on, and wherever it is.
   */
  private readonly defaultScript: string | undefined;

  constructor(private readonly options: RunPolicyOptions = {}) {
    this.roots = (options.roots ?? [process.cwd()]).map((r) => realFolder(r, 'root'));
    const scripted = options.scriptedDirs?.length ? options.scriptedDirs.map((d) => realFolder(d, 'scripted model folder')) : options.allowScriptedModels ? this.roots : [];
    this.scriptedDirs = [...new Set(scripted)];
    this.defaultScript = operatorScript(options.defaultModel);
  }

  modelSpec(requested: string | undefined): string {
    const spec = requested ?? this.options.defaultModel ?? this.options.env?.['SAGE_MODEL'] ?? process.env['SAGE_MODEL'];
    if (!spec) throw new InvalidInputError('No model: pass "model" (e.g. "anthropic:claude-sonnet-4-5") or start the server with SAGE_MODEL.', { field: 'model' });
    return spec;
  }

  /** Resolves a spec to a model, refusing what the policy forbids; errors name the `model` field. */
  model(spec: string): Model {
    let parsed: ModelSpec;
    try {
      parsed = parseModelSpec(spec);
    } catch (error) {
      throw new InvalidInputError((error as Error).message, { field: 'model', cause: error });
    }
    if (parsed.provider === 'scripted') return this.scripted(parsed.name);
    try {
      return this.options.resolveModel ? this.options.resolveModel(parsed.spec) : resolveParsedModel(parsed, { env: this.options.env });
    } catch (error) {
      throw new InvalidInputError((error as Error).message, { field: 'model', cause: error });
    }
  }

  /**
   * A scripted model from an allowed folder. Whatever stops the file from being read (outside the
   * folders, missing, a folder, a device, too big, unreadable) gets one message with no detail;
   * only a file the operator allowed may be reported as a malformed script (by field, not content).
   */
  private scripted(name: string): Model {
    if (this.defaultScript && isAbsolute(name) && realPathOrUndefined(name) === this.defaultScript) return this.loadScript(name, [dirname(this.defaultScript)]);
    if (this.scriptedDirs.length === 0) throw new InvalidInputError('Scripted models are disabled on this server (the operator enables them with --scripted-dir).', { field: 'model' });
    // A client's relative name is read from the first scripted folder: a client does not share the
    // server's working directory, so the allowed folder is the only place such a name can mean.
    return this.loadScript(isAbsolute(name) ? name : resolve(this.scriptedDirs[0]!, name), this.scriptedDirs);
  }

  private loadScript(path: string, within: readonly string[]): Model {
    try {
      return loadScriptedModel(path, { within: [...within], maxBytes: this.options.maxScriptBytes ?? MAX_SCRIPT_BYTES });
    } catch (error) {
      if (ScriptFormatError.isInstance(error)) throw new InvalidInputError(`The scripted model file is not a valid script: ${error.detail}.`, { field: 'model', cause: error });
      throw new InvalidInputError(NOT_ALLOWED_SCRIPT, { field: 'model', cause: error });
    }
  }

  /**
   * The outermost folder whose settings apply to a run in `cwd` (a path `cwd()` returned): its
   * repository's root, never above the server root that holds it; that root when there is no `.git`.
   */
  projectRoot(cwd: string): string {
    const root = this.roots.filter((r) => isInsideFolder(r, cwd)).sort((a, b) => b.length - a.length)[0];
    return findProjectRoot(cwd, root);
  }

  cwd(requested: string | undefined): string {
    const outside = () => new InvalidInputError(`The working directory must be inside ${this.roots.join(' or ')}.`, { field: 'cwd' });
    const lexical = requested === undefined ? this.roots[0]! : resolve(this.roots[0]!, requested);
    // Refused before touching the disk when it is plainly outside; decided on the real path otherwise.
    if (!this.roots.some((root) => isInsideFolder(root, lexical))) throw outside();
    let real: string;
    try {
      real = realpathSync(lexical);
    } catch {
      throw new InvalidInputError('The working directory does not exist or cannot be read.', { field: 'cwd' });
    }
    if (!this.roots.some((root) => isInsideFolder(root, real))) throw outside();
    if (!statSync(real).isDirectory()) throw new InvalidInputError('The working directory is not a directory.', { field: 'cwd' });
    return real;
  }
}
