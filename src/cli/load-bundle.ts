import { createRequire } from 'node:module';
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { createHash } from 'node:crypto';
import vm from 'node:vm';

type Program = typeof import('./main.js');

/**
 * Loads the bundled program (dist/cli-bundle/main.cjs, scripts/bundle-cli.mjs) and keeps V8's
 * compiled code of it in the user's cache folder, so the next start skips most of the compiling:
 * Node 22 has a module compile cache, Node 20 only `cachedData` for a script, which is why the bundle
 * is CommonJS. The cache is a speed-up only: anything wrong with it (missing, unreadable, from
 * another build or Node, rejected by V8) means compiling as without it, and writing a fresh one.
 *
 * With `sourceMaps` (--verbose: stack traces) the bundle is required as usual instead: Node maps
 * its stack frames back to the dist/ modules only for code its own loader compiled.
 */
export function loadBundle(file: string, options: { sourceMaps: boolean }): Program {
  const require = createRequire(file);
  if (options.sourceMaps) {
    process.setSourceMapsEnabled(true);
    return require(file) as Program;
  }
  const source = readFileSync(file, 'utf8');
  let cacheFile: string | undefined;
  let cachedData: Buffer | undefined;
  try {
    cacheFile = cacheFileOf(file, source);
    if (cacheFile) cachedData = readFileSync(cacheFile);
  } catch {
    // none yet (or no home to keep one in)
  }
  // The wrapper Node's CommonJS loader puts around a file, and the bundle's import() of a package
  // (__sageLoaderImport, see scripts/bundle-cli.mjs): this module's own, as node:vm's hook for it is
  // experimental in Node 20 (a warning on stderr) and does not survive a code-cache hit.
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname, __sageLoaderImport) { ${source}\n})`, { filename: file, cachedData });
  const module = { exports: {} as Program };
  const importPackage = (specifier: string): Promise<unknown> => import(specifier);
  (script.runInThisContext() as (...args: unknown[]) => void).call(module.exports, module.exports, require, module, file, dirname(file), importPackage);
  if (cacheFile && (!cachedData || script.cachedDataRejected)) {
    // At exit, so the cache also holds the functions this command compiled on its way.
    process.once('exit', () => writeCache(cacheFile, script));
  }
  return module.exports;
}

/**
 * `~/.cache/sage/cli-<where>-<what>.v8` ($XDG_CACHE_HOME if set): one per bundle location, named by
 * the bundle's content hash (its last line) and the Node that compiled it, since V8 itself checks a
 * cache only against the source's length. None without the hash line.
 */
function cacheFileOf(file: string, source: string): string | undefined {
  const hash = /\/\/# sageBundleHash=([0-9a-f]{64})\n$/.exec(source.slice(-100))?.[1];
  if (!hash) return undefined;
  const where = createHash('sha256').update(file).digest('hex').slice(0, 12);
  const what = createHash('sha256').update(`${hash} ${process.version} ${process.arch}`).digest('hex').slice(0, 16);
  return join(process.env['XDG_CACHE_HOME'] || join(homedir(), '.cache'), 'sage', `cli-${where}-${what}.v8`);
}

function writeCache(cacheFile: string, script: vm.Script): void {
  try {
    const dir = dirname(cacheFile);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // Written aside and renamed: another sage starting now reads a whole cache or none.
    const temp = `${cacheFile}.${process.pid}.tmp`;
    writeFileSync(temp, script.createCachedData());
    renameSync(temp, cacheFile);
    // The caches of earlier builds at this location are of no more use.
    const prefix = cacheFile.slice(dir.length + 1, dir.length + 1 + 'cli-'.length + 12);
    for (const name of readdirSync(dir)) if (name.startsWith(prefix) && join(dir, name) !== cacheFile && name.endsWith('.v8')) rmSync(join(dir, name), { force: true });
  } catch {
    // A read-only or full disk: the next start compiles again, as without a cache.
  }
}
