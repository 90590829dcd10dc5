// The import graph of src/, read with the TypeScript compiler: which file imports which, and how.
// Shared by the architecture tests (the module map's arrows, no runtime cycle between files).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const SRC = join(ROOT, 'src');

/**
 * - `static`: an import or re-export that stays in the emitted JavaScript, so the imported module is
 *   evaluated before the importing one.
 * - `type`: one that TypeScript erases (`import type`, or bindings used only as types).
 * - `dynamic`: `import('…')` called at run time.
 */
export type ImportKind = 'static' | 'type' | 'dynamic';

export interface ImportEdge {
  /**
   * Paths relative to the repository root, with `/`. `to` of a dynamic import of a package is the
   * package's specifier (`pg`), and `(expression)` when the specifier is computed.
   */
  from: string;
  to: string;
  kind: ImportKind;
}

/** Production files of src/: tests and test-support folders are left out. */
export function sourceFiles(dir = SRC): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'test-support') files.push(...sourceFiles(path));
    } else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
      files.push(path);
    }
  }
  return files.sort();
}

const repoPath = (path: string): string => relative(ROOT, path).split('\\').join('/');

/** A relative specifier to the .ts file it names (NodeNext: `./x.js` is `./x.ts`), else undefined. */
function resolveSpecifier(fromFile: string, specifier: string, known: Set<string>): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(fromFile), specifier);
  const stem = base.replace(/\.(js|ts|mjs|cjs|jsx|tsx)$/, '');
  for (const candidate of [`${stem}.ts`, `${stem}.tsx`, join(base, 'index.ts')]) if (known.has(candidate)) return candidate;
  return undefined;
}

/** Whether an identifier stands where a value is read (not a type, a property name or a declaration's name). */
function isValueReference(node: ts.Identifier): boolean {
  const parent = node.parent;
  if (ts.isPropertyAccessExpression(parent) && parent.name === node) return false;
  if (ts.isQualifiedName(parent) && parent.right === node) return false;
  if ((ts.isPropertyAssignment(parent) || ts.isMethodDeclaration(parent) || ts.isPropertyDeclaration(parent)) && parent.name === node) return false;
  if (ts.isImportSpecifier(parent) || ts.isImportClause(parent) || ts.isNamespaceImport(parent)) return false;
  if (ts.isExportSpecifier(parent)) return !parent.isTypeOnly && !parent.parent.parent.isTypeOnly && !parent.parent.parent.moduleSpecifier;
  return true;
}

/**
 * Names read as values in a file, outside types: the imports TypeScript keeps when it emits
 * JavaScript (without `verbatimModuleSyntax` it drops an import whose bindings are only types).
 * Read from the syntax rather than from `transpileModule`, which costs ten times as much here; a
 * name shadowed by a local one counts as a use, so a doubt reads as a runtime import.
 */
function valueNames(source: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) return;
    if (ts.isHeritageClause(node) && node.token === ts.SyntaxKind.ImplementsKeyword) return;
    if (ts.isExpressionWithTypeArguments(node)) return visit(node.expression);
    if (ts.isTypeNode(node)) return;
    if (ts.isIdentifier(node) && isValueReference(node)) names.add(node.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return names;
}

/** Whether an import or re-export stays in the emitted JavaScript. */
function isEmitted(node: ts.ImportDeclaration | ts.ExportDeclaration, values: Set<string>): boolean {
  if (ts.isExportDeclaration(node)) {
    if (node.isTypeOnly) return false;
    const clause = node.exportClause;
    return !clause || !ts.isNamedExports(clause) || clause.elements.length === 0 || clause.elements.some((e) => !e.isTypeOnly);
  }
  const clause = node.importClause;
  if (!clause) return true;
  if (clause.isTypeOnly) return false;
  if (clause.name && values.has(clause.name.text)) return true;
  const bindings = clause.namedBindings;
  if (!bindings) return false;
  if (ts.isNamespaceImport(bindings)) return values.has(bindings.name.text);
  return bindings.elements.some((e) => !e.isTypeOnly && values.has(e.name.text));
}

/** Every import between files of src/, with its kind. */
export function importEdges(files = sourceFiles()): ImportEdge[] {
  const known = new Set(files);
  const edges: ImportEdge[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
    const values = valueNames(source);
    const add = (specifier: string, kind: ImportKind): void => {
      const target = resolveSpecifier(file, specifier, known);
      if (target) edges.push({ from: repoPath(file), to: repoPath(target), kind });
    };
    const visit = (node: ts.Node): void => {
      if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        add(node.moduleSpecifier.text, isEmitted(node, values) ? 'static' : 'type');
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const [argument] = node.arguments;
        if (!argument || !ts.isStringLiteralLike(argument)) edges.push({ from: repoPath(file), to: '(expression)', kind: 'dynamic' });
        else if (argument.text.startsWith('.')) add(argument.text, 'dynamic');
        else edges.push({ from: repoPath(file), to: argument.text, kind: 'dynamic' });
      } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
        add(node.argument.literal.text, 'type');
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return edges;
}

/** The module a file belongs to: its folder under src/ (`src/runtime`), or the file itself at src/'s top. */
export function moduleOf(path: string): string {
  const parts = path.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : path;
}

/**
 * The groups of files that import one another in a circle (Tarjan's strongly connected components),
 * each sorted; a file that imports itself is a group of one.
 */
export function cycles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const connect = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const to of next.get(file) ?? []) {
      if (!index.has(to)) {
        connect(to);
        low.set(file, Math.min(low.get(file)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(file, Math.min(low.get(file)!, index.get(to)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    if (group.length > 1 || next.get(file)?.includes(file)) groups.push(group.sort());
  };
  for (const file of [...next.keys()].sort()) if (!index.has(file)) connect(file);
  return groups;
}
