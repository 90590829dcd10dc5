// Grep on a 10,000-file tree: ripgrep against the JavaScript fallback, median of repeated runs.
// Run: npx tsx bench/grep.ts [runs]
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createGrepTool } from '../src/tool/builtin/grep.js';
import { findExecutable } from '../src/tool/builtin/support/find-executable.js';
import type { ToolContext, ToolResult } from '../src/tool/types.js';

const DIRS = 100;
const FILES_PER_DIR = 100;
const runs = Number(process.argv[2] ?? 7);

/** A TypeScript-looking file; one in 50 mentions the needle, so matches are sparse as in real code. */
function fileText(dir: number, file: number): string {
  const lines: string[] = [`// module ${dir}/${file}`, `import { helper${file % 7} } from '../shared/helpers.js';`];
  for (let i = 0; i < 30; i++) lines.push(`export function fn${i}(value: number): number { return helper${i % 7}(value * ${i}); }`);
  if ((dir * FILES_PER_DIR + file) % 50 === 0) lines.push(`const marker = 'NEEDLE_${dir}_${file}';`);
  return lines.join('\n') + '\n';
}

async function createTree(): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'sage-grep-bench-'));
  await writeFile(path.join(root, '.gitignore'), 'ignored/\n');
  for (let d = 0; d < DIRS; d++) {
    const dir = path.join(root, `pkg${d}`, 'src');
    await mkdir(dir, { recursive: true });
    await Promise.all(Array.from({ length: FILES_PER_DIR }, (_, f) => writeFile(path.join(dir, `file${f}.ts`), fileText(d, f))));
  }
  return root;
}

function context(cwd: string): ToolContext {
  return {
    runId: 'bench', sessionId: 'bench', userId: 'bench', toolCallId: 'bench', cwd,
    signal: new AbortController().signal, runState: new Map(),
    interact: () => Promise.reject(new Error('Grep never asks')),
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function main(): Promise<void> {
  const rg = findExecutable('rg');
  const root = await createTree();
  const cases: { label: string; input: Record<string, unknown> }[] = [
    { label: 'files_with_matches', input: { pattern: 'NEEDLE_\\d+_\\d+' } },
    { label: 'content -C 1', input: { pattern: 'NEEDLE_\\d+_\\d+', output_mode: 'content', '-C': 1 } },
    { label: 'count, -i', input: { pattern: 'needle', output_mode: 'count', '-i': true } },
    { label: 'type ts, no match', input: { pattern: 'absent_identifier', type: 'ts' } },
  ];
  const backends = [
    { name: 'javascript', tool: createGrepTool({ rgPath: null }) },
    ...(rg ? [{ name: `ripgrep (${rg})`, tool: createGrepTool({ rgPath: rg }) }] : []),
  ];
  console.log(`Grep over ${DIRS * FILES_PER_DIR} files in ${root}; median of ${runs} runs after one warm-up\n`);
  const rows: string[][] = [];
  try {
    for (const c of cases) {
      const outputs: string[] = [];
      const row = [c.label];
      for (const backend of backends) {
        const times: number[] = [];
        let last: ToolResult | string | undefined;
        for (let i = 0; i <= runs; i++) {
          const started = performance.now();
          last = await backend.tool.execute(c.input as never, context(root));
          if (i > 0) times.push(performance.now() - started);
        }
        outputs.push(typeof last === 'string' ? last : (last?.content ?? ''));
        row.push(`${median(times).toFixed(1)} ms`);
      }
      row.push(outputs.every((o) => o === outputs[0]) ? 'yes' : 'NO');
      rows.push(row);
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  const header = ['case', ...backends.map((b) => b.name.split(' ')[0]!), 'same output'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const row of rows) console.log(line(row));
  if (!rg) console.log('\nripgrep (rg) is not on PATH: only the JavaScript search was measured.');
}

await main();
