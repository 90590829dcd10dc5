/* global process, URL */
// Bundles the `sage` command's program (dist/cli/main.js, as tsc wrote it, and everything it loads)
// into dist/cli-bundle/, run by `npm run build` after tsc. Why: a one-turn `sage run` loaded ~300
// ES modules one by one (resolve, stat, read, compile, link each), which was most of its start
// (issue 13, goal 4). dist/cli/bin.js imports the bundle when it is at least as new as main.js.
//
// - Code splitting keeps every `await import()` of the program lazy: `sage run` does not load the
//   server, channels or agents. The chunks live two folders deep (dist/cli-bundle/), like the
//   modules they come from, so their `new URL('../../…', import.meta.url)` still find package.json,
//   demo/ and web/dist.
// - Only pure-JS packages on the run's path are bundled; every other package stays an import of
//   node_modules (native better-sqlite3 and pg, web-tree-sitter's wasm, pino's worker, the SDKs).
// - Names are kept (keepNames): SageError subclasses recognise each other by class name.
// - Source maps point at the dist/ modules tsc wrote, so `--verbose` stack traces (bin.js turns
//   source maps on for it) name the same files and lines as before the bundle.
import { build } from 'esbuild';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
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

// tsc's own `//# sourceMappingURL` comments would chain the maps through to src/*.ts, which the
// package does not ship; without them the maps name dist/*.js, as stack traces did before.
const mapToDist = {
  name: 'map-to-dist',
  setup(b) {
    b.onLoad({ filter: new RegExp(`^${dist.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/.*\\.js$`) }, async (args) => ({
      contents: (await readFile(args.path, 'utf8')).replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'),
      loader: 'js',
    }));
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

await rm(staging, { recursive: true, force: true });
const result = await build({
  entryPoints: { main: `${dist}/cli/main.js` },
  outdir: staging,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunk-[hash]',
  // Less to parse at every start; identifiers stay, so stack traces read as they did.
  minifyWhitespace: true,
  minifySyntax: true,
  keepNames: true,
  sourcemap: 'linked',
  sourcesContent: false,
  // commander, picomatch and ignore are CommonJS: their require() of Node's modules needs one.
  banner: { js: "import { createRequire as __sageCreateRequire } from 'node:module'; const require = __sageCreateRequire(import.meta.url);" },
  plugins: [keepPackagesOut, mapToDist, englishOnlyZod],
  logLevel: 'warning',
  metafile: Boolean(process.env.BUNDLE_METAFILE),
});
// BUNDLE_METAFILE=file.json: what each chunk holds, for https://esbuild.github.io/analyze/ or a script.
if (process.env.BUNDLE_METAFILE) await writeFile(process.env.BUNDLE_METAFILE, JSON.stringify(result.metafile));
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
