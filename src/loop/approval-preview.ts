import { readFile } from 'node:fs/promises';
import type { PermissionDecision } from '../permission/types.js';
import { displayPath, resolvePath } from '../tool/builtin/support/resolve-path.js';
import { unifiedDiff } from '../tool/builtin/support/unified-diff.js';

/** Files larger than this are not read for a preview: the prompt then shows the input alone. */
const MAX_PREVIEW_BYTES = 512 * 1024;

/**
 * What a person needs to judge an ask, put on the confirm request's metadata: the risk the gate
 * assessed, and for Edit/Write the path relative to the project and the diff the call would make,
 * computed before approval (the tool's own diff only exists after it ran).
 */
export interface ApprovalPreview {
  risk?: 'LOW' | 'MEDIUM' | 'HIGH' | 'UNKNOWN';
  /** The file's path as the person should read it: relative inside the project, absolute outside. */
  path?: string;
  /** A unified diff (`--- path` / `+++ path`, no `a/` `b/` prefixes) of the change. */
  diff?: string;
  /** Write of a file that does not exist yet: the diff is the whole new file. */
  newFile?: boolean;
  /** Why no diff could be computed (old_string not found, file unreadable, too large). */
  previewError?: string;
}

export async function approvalPreview(toolName: string, input: unknown, cwd: string, decision: PermissionDecision): Promise<ApprovalPreview> {
  // A forced ask (critical path, never auto-approved) is high risk even when no classifier ran.
  const risk = decision.risk ?? (decision.forced ? 'HIGH' : undefined);
  const preview: ApprovalPreview = risk ? { risk } : {};
  if (toolName !== 'Edit' && toolName !== 'Write') return preview;
  const fields = (input ?? {}) as Record<string, unknown>;
  if (typeof fields['file_path'] !== 'string') return preview;
  const abs = resolvePath(cwd, fields['file_path']);
  const shown = displayPath(cwd, abs);
  preview.path = shown;
  const before = await readSmall(abs);
  if (before.error) return { ...preview, previewError: before.error };
  if (toolName === 'Write') {
    if (typeof fields['content'] !== 'string') return preview;
    if (before.text === undefined) preview.newFile = true;
    preview.diff = unifiedDiff(before.text ?? '', fields['content'], { fromFile: before.text === undefined ? '/dev/null' : shown, toFile: shown });
    return preview;
  }
  const oldString = fields['old_string'];
  const newString = fields['new_string'];
  if (typeof oldString !== 'string' || typeof newString !== 'string') return preview;
  if (before.text === undefined) return { ...preview, previewError: `${shown} does not exist.` };
  if (oldString === '' || !before.text.includes(oldString)) return { ...preview, previewError: `old_string was not found in ${shown}; the tool will report an error.` };
  // split/join as the tool does: the replacement must not interpret `$&`.
  const after = fields['replace_all'] === true ? before.text.split(oldString).join(newString) : before.text.replace(oldString, () => newString);
  preview.diff = unifiedDiff(before.text, after, { fromFile: shown, toFile: shown });
  return preview;
}

async function readSmall(file: string): Promise<{ text?: string; error?: string }> {
  try {
    const buffer = await readFile(file);
    if (buffer.length > MAX_PREVIEW_BYTES) return { error: `the file is over ${MAX_PREVIEW_BYTES / 1024} KiB; no preview` };
    return { text: buffer.toString('utf8') };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return {};
    return { error: code === 'EISDIR' ? 'the path is a directory' : `the file cannot be read (${code ?? 'error'})` };
  }
}
