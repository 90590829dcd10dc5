import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { PermissionMode } from '../permission/index.js';
import type { RunPolicy } from '../runtime/run-policy.js';
import type { ServerPolicy } from '../runtime/server-policy.js';

/** What a client may pick when it starts a run here: shown by the web UI's new-run form. */
export interface ServerOffer {
  /** The model a run gets when the request names none; null: every request must name one. */
  defaultModel: string | null;
  /** `scripted:<file>` specs for the model files in the operator's scripted folders (empty when scripted models are off). */
  scriptedModels: string[];
  /** The working directories a run may use (a run's cwd must be inside one). */
  roots: string[];
  permissionModes: PermissionMode[];
}

const MAX_SCRIPTS = 200;

/** Reads the offer from the two policies; the scripted folders are listed (top level only) on each call. */
export function serverOffer(runPolicy: RunPolicy | undefined, serverPolicy: ServerPolicy): ServerOffer {
  let defaultModel: string | null = null;
  const scriptedModels: string[] = [];
  if (runPolicy) {
    try {
      defaultModel = runPolicy.modelSpec(undefined);
    } catch {
      defaultModel = null;
    }
    for (const dir of runPolicy.scriptedDirs) {
      let names: string[] = [];
      try {
        names = readdirSync(dir, { withFileTypes: true })
          .filter((d) => d.isFile() && /\.json$/i.test(d.name))
          .map((d) => d.name)
          .sort();
      } catch {
        // A folder that went away since startup offers nothing; starting a run from it would fail anyway.
      }
      for (const name of names) if (scriptedModels.length < MAX_SCRIPTS) scriptedModels.push(`scripted:${join(dir, name)}`);
    }
  }
  return { defaultModel, scriptedModels, roots: runPolicy ? [...runPolicy.roots] : [], permissionModes: [...serverPolicy.permissionModes] };
}
