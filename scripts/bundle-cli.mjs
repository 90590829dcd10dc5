/* global process, URL */
// Bundles the `sage` command's program (dist/cli/main.js, as tsc wrote it, and everything it loads)
// into one CommonJS file, dist/cli-bundle/main.cjs, run by `npm run build` after tsc. Why:
// a one-turn `sage run` loaded ~300 ES modules one by one (resolve, stat, read, compile,
// link each), which was most of its start. dist/cli/bin.js loads the bundle through
// src/cli/bin.ts, which keeps V8's compiled code of it between runs (Node 20 has no compile
// cache for ES modules; for a script it has `cachedData`), so a start mostly skips compiling too.
//
// - One file, not split: esbuild splits ES modules only, and ~70 chunks cost a module load each.
//   Every `await import()` of the program stays lazy inside the file (esbuild runs a module's code
//   when it is first imported), so `sage run` does not run the server's or the channels' code.
// - Only pure-JS packages on the run's path are bundled; every other package stays a require() or
//   import() of node_modules (native better-sqlite3 and pg, web-tree-sitter's wasm, pino's worker,
//   the SDKs). An ES-module-only package required from here needs require(esm): Node >= 20.19, which
//   bin.js checks before it takes the bundle.
// - The file lives two folders deep (dist/cli-bundle/), like the modules it comes from, so their
//   `new URL('../../…', import.meta.url)` still find package.json, demo/ and web/dist.
// - Names are kept (keepNames): SageError subclasses recognise each other by class name.
// - The source map points at the dist/ modules tsc wrote, so `--verbose` stack traces (bin.js turns
//   source maps on for it) name the same files and lines as before the bundle.
// - The last line carries a hash of the code: bin.ts keys its code cache by it (V8 checks a
//   cache only against the source's length).
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = `${root}dist`;
const out = `${dist}/cli-bundle`;
const staging = `${dist}/cli-bundle.tmp-${process.pid}`;

/** Pure-JS packages the CLI's common paths load; everything else is left to node_modules. */
const BUNDLED = new Set(['zod', 'commander', 'picomatch', 'ignore']);
const packageOf = (specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

const keepPackagesOut = {
  name: 'keep-packages-out',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('node:') || !BUNDLED.has(packageOf(args.path)) ? { external: true } : undefined));
  },
};

// better-sqlite3's JavaScript (13 small CommonJS files, with `bindings` and `file-uri-to-path` 15)
// was resolved, read and compiled at every start, without a code cache (require('better-sqlite3')
// alone: 4.6-7 ms here). It is bundled here; its native addon is still loaded from node_modules. The JavaScript
// and the addon of one better-sqlite3 version go together (their interface is internal to it), so
// the bundled copy is used only when the installed better-sqlite3 is the version bundled, which the
// wrapper reads from its package.json; any other version is required from node_modules as before.
const sqliteRoot = `${root}node_modules/better-sqlite3`;
const sqliteVersion = JSON.parse(await readFile(`${sqliteRoot}/package.json`, 'utf8')).version;
const bundledBetterSqlite = {
  name: 'bundled-better-sqlite3',
  setup(b) {
    b.onResolve({ filter: /^better-sqlite3$/ }, (args) =>
      args.namespace === 'sage-sqlite' ? { path: 'better-sqlite3', external: true } : { path: 'better-sqlite3', namespace: 'sage-sqlite' },
    );
    b.onLoad({ filter: /.*/, namespace: 'sage-sqlite' }, () => ({
      contents: `const { readFileSync } = require('node:fs');
let installed;
try {
  installed = JSON.parse(readFileSync(require.resolve('better-sqlite3/package.json'), 'utf8')).version;
} catch {
  // not found this way: node_modules decides, as without the bundle
}
module.exports = installed === ${JSON.stringify(sqliteVersion)} ? require(${JSON.stringify(`${sqliteRoot}/lib/index.js`)}) : require('better-sqlite3');
`,
      loader: 'js',
      resolveDir: root,
    }));
    // The addon: \`bindings\` finds it from the caller's file name in a stack trace, which in the
    // bundle is the bundle's. Given the package's folder it searches as it always does; the usual
    // install has only build/Release/, which is loaded straight away (bindings' first two places
    // checked empty, so the same file it would find).
    b.onLoad({ filter: /\/node_modules\/better-sqlite3\/lib\/database\.js$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      const eager = "require('bindings')('better_sqlite3.node')";
      if (!text.includes(eager)) throw new Error(`${args.path} no longer has ${eager}: look again at the bundled-better-sqlite3 plugin`);
      const addon = `((root) => {
        const at = (...dirs) => path.join(root, ...dirs, 'better_sqlite3.node');
        if (!fs.existsSync(at('build')) && !fs.existsSync(at('build', 'Debug')) && fs.existsSync(at('build', 'Release'))) return require(at('build', 'Release'));
        return require('bindings')({ bindings: 'better_sqlite3.node', module_root: root });
      })(path.dirname(require.resolve('better-sqlite3/package.json')))`;
      return { contents: text.replace(eager, addon), loader: 'js' };
    });
  },
};

// The modules as tsc wrote them, with two changes:
// - tsc's own `//# sourceMappingURL` comments would chain the maps through to src/*.ts, which the
//   package does not ship; without them the maps name dist/*.js, as stack traces did before.
// - import() of a package (web-tree-sitter, @inquirer/prompts: ES modules only) goes through
//   __sageImport (see the banner): bin.ts compiles the bundle with node:vm, whose own hook
//   for import() is experimental in Node 20 (a warning on stderr) and lost on a code-cache hit.
const fromDist = {
  name: 'from-dist',
  setup(b) {
    b.onLoad({ filter: new RegExp(`^${dist.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/.*\\.js$`) }, async (args) => ({
      contents: (await readFile(args.path, 'utf8')).replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n').replace(/\bimport\('([^'./][^']*)'\)/g, "__sageImport('$1')"),
      loader: 'js',
    }));
  },
};

// commander requires node:child_process when loaded, for subcommands that are executables of their
// own (which sage has none of); loading it (and node:net, node:dgram with it) was part of every start.
// Here it is required when first used.
const lazyChildProcessInCommander = {
  name: 'lazy-child-process-in-commander',
  setup(b) {
    b.onLoad({ filter: /\/node_modules\/commander\/lib\/command\.js$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      const eager = "const childProcess = require('node:child_process');";
      if (!text.includes(eager)) throw new Error(`${args.path} no longer has the line ${eager}: look again at the lazy-child-process-in-commander plugin`);
      return { contents: text.replace(eager, "let childProcessModule; const childProcess = { spawn: (...args) => (childProcessModule ??= require('node:child_process')).spawn(...args) };"), loader: 'js' };
    });
  },
};

// `z.locales` would bring zod's ~50 translations (half of zod's bytes in the bundle, parsed at every
// start); the CLI only ever uses the English default, which zod's schemas import on their own.
const englishOnlyZod = {
  name: 'english-only-zod',
  setup(b) {
    b.onLoad({ filter: /\/node_modules\/zod\/v4\/locales\/index\.js$/ }, () => ({ contents: 'export { default as en } from "./en.js";\n', loader: 'js' }));
  },
};

const result = await build({
  entryPoints: [`${dist}/cli/main.js`],
  outfile: `${staging}/main.cjs`,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  // Less to scan when there is no code cache yet; identifiers stay, so stack traces read as they did.
  minifyWhitespace: true,
  minifySyntax: true,
  keepNames: true,
  sourcemap: 'linked',
  sourcesContent: false,
  // The modules' `import.meta.url` is the bundle's own URL: it sits as deep in dist/ as they did.
  define: { 'import.meta.url': '__sageImportMetaUrl' },
  // Strict, as ES modules are (CommonJS is not by default). __sageImport: bin.ts's import()
  // when it compiled the bundle, else (required as usual, for --verbose) the bundle's own.
  banner: {
    js: "'use strict'; const __sageImportMetaUrl = require('node:url').pathToFileURL(__filename).href; const __sageImport = typeof __sageLoaderImport === 'function' ? __sageLoaderImport : (specifier) => import(specifier);",
  },
  plugins: [bundledBetterSqlite, keepPackagesOut, fromDist, englishOnlyZod, lazyChildProcessInCommander],
  logLevel: 'warning',
  write: false,
  metafile: Boolean(process.env.BUNDLE_METAFILE),
});
// BUNDLE_METAFILE=file.json: what the bundle holds, for https://esbuild.github.io/analyze/ or a script.
if (process.env.BUNDLE_METAFILE) await writeFile(process.env.BUNDLE_METAFILE, JSON.stringify(result.metafile));

await rm(staging, { recursive: true, force: true });
await mkdir(staging, { recursive: true });
for (const file of result.outputFiles) {
  const text = file.path.endsWith('.cjs') ? withHash(asciiOnly(namesOnlyWhereNeeded(file.text))) : file.text;
  await writeFile(file.path, text);
}

/**
 * keepNames has esbuild call __name(fn, "name") for every function and class it emits, which
 * redefines the function's `name` property: a one-turn `sage run` made 4,062 such calls, 1,797 of
 * them on a function that already had that very name (a declaration esbuild did not rename), each a
 * change of the function's hidden class all the same. Those are skipped: the property reads the
 * same either way (a non-writable, non-enumerable, configurable string). Instructions of that run
 * (valgrind --tool=cachegrind): 770.1M -> 758.6M. Checked, so a new esbuild that writes the helper
 * differently fails the build rather than quietly keeping the cost.
 */
function namesOnlyWhereNeeded(text) {
  const helper = 'var __name=(target,value2)=>__defProp(target,"name",{value:value2,configurable:!0});';
  if (!text.includes(helper)) throw new Error(`the CLI bundle no longer defines esbuild's __name as ${helper}: look again at namesOnlyWhereNeeded`);
  return text.replace(helper, 'var __name=(target,value2)=>target.name===value2?target:__defProp(target,"name",{value:value2,configurable:!0});');
}

/**
 * The program as ASCII only. esbuild escapes what it can, but not the characters of a regular
 * expression (one of the channels' has a 。), and one such character made the whole file a two-byte
 * string in V8: 2.5 MB instead of 1.25 MB read, decoded and copied at every start. A \uXXXX escape
 * means the same in a string, a template, a regular expression and a name (only a tagged template's
 * raw text would differ, and no such text here has one). Checked, so a bundle that is not ASCII
 * fails the build instead of quietly starting slower.
 */
function asciiOnly(text) {
  // eslint-disable-next-line no-control-regex
  const escaped = text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  // eslint-disable-next-line no-control-regex
  if (/[^\x00-\x7f]/.test(escaped)) throw new Error('the CLI bundle is not ASCII');
  return escaped;
}

function withHash(text) {
  return `${text}//# sageBundleHash=${createHash('sha256').update(text).digest('hex')}\n`;
}

// Swapped in whole, so a `sage` started meanwhile (tests run while others build) sees one bundle.
// Two builds at once (a shared tree) may both swap: whichever renames last wins, and the other's
// rename onto the new folder fails (ENOTEMPTY), so it moves that one aside and tries again.
const old = `${out}.old-${process.pid}`;
for (let attempt = 1; ; attempt++) {
  await rename(out, old).catch((error) => {
    if (error.code !== 'ENOENT') throw error;
  });
  await rm(old, { recursive: true, force: true });
  try {
    await rename(staging, out);
    break;
  } catch (error) {
    if ((error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') || attempt === 5) throw error;
  }
}
