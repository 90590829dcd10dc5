import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

/** The absolute path of a program on PATH, or undefined when it is not installed. */
export function findExecutable(name: string, searchPath = process.env.PATH ?? ''): string | undefined {
  for (const dir of searchPath.split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not here; keep looking.
    }
  }
  return undefined;
}
