#!/usr/bin/env node
// The `sage` command's entry point. `--version` answers before anything heavy is loaded, so the
// most common probe of an installed CLI stays fast; everything else loads the program lazily.
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

type Program = typeof import('./main.js');

/** V8's semi_space_growth_factor for a command's start, and V8's own (see youngGrowth). */
const YOUNG_GROWTH_FAST = 16;
const YOUNG_GROWTH_DEFAULT = 2;

const args = process.argv.slice(2);
let servedExit: number | undefined;
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V' || args[0] === '-v')) {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  process.stdout.write(`${pkg.version}\n`);
} else if (args[0] === 'serve' && (servedExit = await serveInChild(args)) !== undefined) {
  process.exitCode = servedExit;
} else {
  const bundle = bundleFile();
  const fastYoungGrowth = !args.includes('serve');
  let program: Program;
  if (bundle) program = loadBundle(bundle, { sourceMaps: args.includes('--verbose'), fastYoungGrowth });
  else {
    if (fastYoungGrowth) youngGrowth(YOUNG_GROWTH_FAST);
    program = (await import('./main.js')) as Program;
  }
  const { main } = program;
  process.exitCode = await main(process.argv);
  if (args[0] === 'run') exitWithoutTeardown();
}

/**
 * `sage run` is over and has closed its store; when nothing is left to do (the event loop empty:
 * every write, close and child process done), the process exits with its code there and then,
 * instead of Node's own way out of a finished program, which first tears down V8's heap page by
 * page and the environment (measured: 21.5 -> 12.9 ms median from the 'exit' event to the end of
 * the process). 'exit' listeners still run; 'beforeExit' is only emitted once the loop is empty.
 */
function exitWithoutTeardown(): void {
  process.once('beforeExit', () => process.exit());
}

/**
 * `sage serve` in a child Node process given V8 flags the server needs from its first moment
 * (src/cli/serve-process.ts): the exit code to end with, once the child has ended; undefined at
 * once when the server runs in this process instead.
 */
async function serveInChild(args: readonly string[]): Promise<number | undefined> {
  const { serveChildFlags, runServeInChild } = await import('./serve-process.js');
  const nodeFlags = serveChildFlags(args, process.env, process.execArgv);
  return nodeFlags ? runServeInChild(process.argv[1]!, args, nodeFlags) : undefined;
}

/**
 * The program as `npm run build` bundles it (main.js and what it loads, in ../cli-bundle/main.cjs,
 * by scripts/bundle-cli.mjs): one file, its compiled code cached between runs, instead of ~300
 * modules to resolve and load one by one. None, and then the modules themselves, when the bundle is
 * older than main.js (tsc ran without the bundle step: it would be stale), when this runs from src/,
 * or on a Node without require(esm) (before 20.19), which the bundle's ES-module-only packages
 * need. An installed package has the bundle: npm pack gives every file the same mtime, and the
 * same counts as fresh.
 */
function bundleFile(): string | undefined {
  if (!process.features.require_module) return undefined;
  const bundle = new URL('../cli-bundle/main.cjs', import.meta.url);
  try {
    if (statSync(bundle).mtimeMs >= statSync(new URL('./main.js', import.meta.url)).mtimeMs) return fileURLToPath(bundle);
  } catch {
    // no bundle (or, from src/, no main.js)
  }
  return undefined;
}

/**
 * A command's start allocates ~14 MB that nearly all stays alive (the program's functions, zod's
 * schemas, the store): V8's young generation starts at 1 MB and doubles only after a collection
 * that finds most of it alive, so a one-turn `sage run` spent six scavenges (~10 ms on this 2-core
 * machine, more when it is busy) copying the same objects from one half of it to the other. Grown
 * 16-fold at once, two do. The largest size (V8's own, 16 MB a half) is unchanged, and V8 reads this
 * factor each time it grows the space, so setting it while the program runs takes effect. Not for
 * `sage serve`: a long-lived server, whose heap is sized on purpose (src/cli/serve-process.ts).
 *
 * V8 stamps a code cache with its non-default flags and refuses one made under others (measured:
 * a cache made with this factor set is rejected without it), so the factor is V8's own whenever the
 * bundle's cache is checked or made (loadBundle): `sage serve` and every other command share one.
 */
function youngGrowth(factor: number): void {
  process.getBuiltinModule?.('node:v8')?.setFlagsFromString(`--semi-space-growth-factor=${factor}`);
}

// The loader lives in this file rather than a module of its own: importing one more ES module cost
// a one-turn `sage run` its resolution, linking and four reads on libuv's thread pool (open, stat,
// read, close), each a wait for another thread on a busy machine. Node's modules it needs are taken
// with process.getBuiltinModule when the bundle is loaded (every Node with require(esm) has it), so
// `--version` loads none of them (node:crypto alone is ~2.5 ms).

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
function loadBundle(file: string, options: { sourceMaps: boolean; fastYoungGrowth: boolean }): Program {
  const { createRequire } = process.getBuiltinModule('node:module');
  const { dirname } = process.getBuiltinModule('node:path');
  const vm = process.getBuiltinModule('node:vm');
  const require = createRequire(file);
  if (options.sourceMaps) {
    if (options.fastYoungGrowth) youngGrowth(YOUNG_GROWTH_FAST);
    process.setSourceMapsEnabled(true);
    return require(file) as Program;
  }
  // Latin-1: a one-byte string straight from the bytes, no UTF-8 decoding of 1.3 MB. The same text:
  // the build fails unless the bundle is ASCII (scripts/bundle-cli.mjs).
  const source = readFileSync(file, 'latin1');
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
  // After V8 checked the cache, before the program allocates (see youngGrowth).
  if (options.fastYoungGrowth) youngGrowth(YOUNG_GROWTH_FAST);
  const module = { exports: {} as Program };
  const importPackage = (specifier: string): Promise<unknown> => import(specifier);
  (script.runInThisContext() as (...args: unknown[]) => void).call(module.exports, module.exports, require, module, file, dirname(file), importPackage);
  if (cacheFile && (!cachedData || script.cachedDataRejected)) {
    // At exit, so the cache also holds the functions this command compiled on its way.
    process.once('exit', () => {
      if (options.fastYoungGrowth) youngGrowth(YOUNG_GROWTH_DEFAULT);
      writeCache(cacheFile, script);
    });
  }
  return module.exports;
}

/**
 * `~/.cache/sage/cli-<where>-<flags>-<what>.v8` ($XDG_CACHE_HOME if set): one per bundle location
 * and Node flags (`sage serve`'s server runs with its own, src/cli/serve-process.ts, and V8 refuses a
 * cache made under other flags: one file for both would be rejected and rewritten in turn), named by
 * the bundle's content hash (its last line) and the Node that compiled it, since V8 itself checks a
 * cache only against the source's length. None without the hash line.
 */
function cacheFileOf(file: string, source: string): string | undefined {
  const hash = /\/\/# sageBundleHash=([0-9a-f]{64})\n$/.exec(source.slice(-100))?.[1];
  if (!hash) return undefined;
  const { createHash } = process.getBuiltinModule('node:crypto');
  const { join } = process.getBuiltinModule('node:path');
  const { homedir } = process.getBuiltinModule('node:os');
  const where = createHash('sha256').update(file).digest('hex').slice(0, 12);
  const flags = createHash('sha256').update(`${process.execArgv.join(' ')}\n${process.env['NODE_OPTIONS'] ?? ''}`).digest('hex').slice(0, 8);
  const what = createHash('sha256').update(`${hash} ${process.version} ${process.arch}`).digest('hex').slice(0, 16);
  return join(process.env['XDG_CACHE_HOME'] || join(homedir(), '.cache'), 'sage', `cli-${where}-${flags}-${what}.v8`);
}

function writeCache(cacheFile: string, script: import('node:vm').Script): void {
  try {
    const { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } = process.getBuiltinModule('node:fs');
    const { dirname, join } = process.getBuiltinModule('node:path');
    const dir = dirname(cacheFile);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // Written aside and renamed: another sage starting now reads a whole cache or none.
    const temp = `${cacheFile}.${process.pid}.tmp`;
    writeFileSync(temp, script.createCachedData());
    renameSync(temp, cacheFile);
    // The caches of earlier builds at this location and with these flags are of no more use, nor
    // those named before flags were part of the name (cli-<where>-<what>.v8).
    const name = cacheFile.slice(dir.length + 1);
    const prefix = name.slice(0, 'cli-'.length + 12 + 1 + 8 + 1);
    const unflagged = new RegExp(`^${name.slice(0, 'cli-'.length + 12)}-[0-9a-f]{16}\\.v8$`);
    for (const other of readdirSync(dir)) if (other !== name && other.endsWith('.v8') && (other.startsWith(prefix) || unflagged.test(other))) rmSync(join(dir, other), { force: true });
  } catch {
    // A read-only or full disk: the next start compiles again, as without a cache.
  }
}
