/** One line of a line diff: kept (' '), removed ('-') or added ('+'). */
export interface DiffOp {
  type: ' ' | '-' | '+';
  line: string;
}

/** Beyond this much work Myers' trace gets large; the changed block is then shown as replaced. */
const MAX_TRACE_CELLS = 4_000_000;

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Myers' O((N+M)·D) shortest edit script over the lines that differ. */
function myers(a: readonly string[], b: readonly string[]): DiffOp[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    if ((d + 1) * v.length > MAX_TRACE_CELLS) return undefined;
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(a, b, trace, offset);
    }
  }
  return undefined;
}

function backtrack(a: readonly string[], b: readonly string[], trace: Int32Array[], offset: number): DiffOp[] {
  const ops: DiffOp[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = trace.length - 1; d >= 0; d--) {
    const v = trace[d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? k + 1 : k - 1;
    const prevX = v[offset + prevK]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push({ type: ' ', line: a[--x]! });
      y--;
    }
    if (d > 0) {
      if (x === prevX) ops.push({ type: '+', line: b[--y]! });
      else ops.push({ type: '-', line: a[--x]! });
    }
  }
  return ops.reverse();
}

/** A line diff: common head and tail trimmed, Myers in between. */
export function diffLines(oldText: string, newText: string): DiffOp[] {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const middleA = a.slice(start, endA);
  const middleB = b.slice(start, endB);
  const middle = myers(middleA, middleB) ?? [
    ...middleA.map((line) => ({ type: '-' as const, line })),
    ...middleB.map((line) => ({ type: '+' as const, line })),
  ];
  return [
    ...a.slice(0, start).map((line) => ({ type: ' ' as const, line })),
    ...middle,
    ...a.slice(endA).map((line) => ({ type: ' ' as const, line })),
  ];
}

/**
 * A unified diff (`diff -u` style, `context` lines around each change) of two texts; empty when
 * they have the same lines.
 *
 * @example unifiedDiff('a\nb\n', 'a\nc\n', { fromFile: 'a/x', toFile: 'b/x' })
 */
export function unifiedDiff(oldText: string, newText: string, options: { fromFile: string; toFile: string; context?: number }): string {
  const context = options.context ?? 3;
  const ops = diffLines(oldText, newText);
  const changed = ops.map((op, index) => (op.type === ' ' ? -1 : index)).filter((index) => index >= 0);
  if (changed.length === 0) return '';

  // Old and new line numbers (1-based) before each op.
  const oldAt: number[] = [];
  const newAt: number[] = [];
  let oldLine = 1;
  let newLine = 1;
  for (const op of ops) {
    oldAt.push(oldLine);
    newAt.push(newLine);
    if (op.type !== '+') oldLine++;
    if (op.type !== '-') newLine++;
  }

  const out = [`--- ${options.fromFile}`, `+++ ${options.toFile}`];
  let i = 0;
  while (i < changed.length) {
    const first = changed[i]!;
    let last = first;
    // Changes closer than two contexts apart share a hunk, as diff -u does.
    while (i + 1 < changed.length && changed[i + 1]! - last <= 2 * context + 1) last = changed[++i]!;
    i++;
    const from = Math.max(0, first - context);
    const to = Math.min(ops.length - 1, last + context);
    const hunk = ops.slice(from, to + 1);
    const oldCount = hunk.filter((op) => op.type !== '+').length;
    const newCount = hunk.filter((op) => op.type !== '-').length;
    const oldStart = oldCount === 0 ? oldAt[from]! - 1 : oldAt[from]!;
    const newStart = newCount === 0 ? newAt[from]! - 1 : newAt[from]!;
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`);
    for (const op of hunk) out.push(op.type + op.line);
  }
  return out.join('\n');
}
