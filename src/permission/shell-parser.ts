import { createRequire } from 'node:module';
import type { Parser, Tree } from 'web-tree-sitter';
import { ShellParserUnavailableError } from './errors.js';

// The WASM runtime and grammar are loaded once per process; later calls reuse the same parser.
let loading: Promise<Parser> | undefined;
let parser: Parser | undefined;

/** Loads tree-sitter and the bash grammar (idempotent). Resolved from node_modules, not hard-coded. */
export function loadShellParser(): Promise<void> {
  loading ??= (async () => {
    try {
      const require = createRequire(import.meta.url);
      // Imported here: the module is a lot of JavaScript to compile, and a run that never
      // meets a shell command (or a CLI command that decides nothing) has no use for it.
      const { Language, Parser } = await import('web-tree-sitter');
      await Parser.init();
      const language = await Language.load(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
      const p = new Parser();
      p.setLanguage(language);
      parser = p;
      return p;
    } catch (cause) {
      loading = undefined;
      throw new ShellParserUnavailableError({ cause });
    }
  })();
  return loading.then(() => undefined);
}

export function isShellParserLoaded(): boolean {
  return parser !== undefined;
}

/** Parses a shell command; the caller must `delete()` the tree. Requires `loadShellParser()` first. */
export function parseShellTree(source: string): Tree {
  if (!parser) throw new ShellParserUnavailableError();
  const tree = parser.parse(source);
  if (!tree) throw new ShellParserUnavailableError();
  return tree;
}
