import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { definitionDirs, FrontMatterError, parseFrontMatter, type DefinitionProblem, type DefinitionScope } from '../skills/index.js';
import { agentFrontMatterSchema, BUILTIN_SUBAGENTS, type SubagentDefinition, type WorkingDirectory } from './definition.js';

const MAX_AGENT_BYTES = 256 * 1024;

/** Reads one agent file; a problem names the file and the field instead of throwing. */
export function loadAgentFile(file: string, scope: DefinitionScope): SubagentDefinition | DefinitionProblem {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    return { file, field: '(file)', message: `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  if (text.length > MAX_AGENT_BYTES) return { file, field: '(file)', message: `is larger than ${MAX_AGENT_BYTES} bytes` };
  let fields: Record<string, unknown>;
  let body: string;
  try {
    ({ fields, body } = parseFrontMatter(text));
  } catch (error) {
    if (error instanceof FrontMatterError) return { file, field: '(front matter)', message: error.message };
    throw error;
  }
  const parsed = agentFrontMatterSchema.safeParse(fields);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { file, field: issue.path.map(String).join('.') || '(front matter)', message: issue.message };
  }
  const f = parsed.data;
  return {
    name: f.name,
    description: f.description,
    // `*` / `All` can only mean the parent's tools: never more.
    ...(f.tools && !(f.tools.length === 1 && (f.tools[0] === '*' || f.tools[0] === 'All')) ? { tools: f.tools } : {}),
    // Claude Code's aliases name models of its own provider; Sage keeps the parent's model for them.
    ...(f.model && f.model !== 'inherit' && f.model.includes(':') ? { model: f.model } : {}),
    ...(f.permissionMode ? { permissionMode: f.permissionMode } : {}),
    workingDirectory: workingDirectoryOf(f.working_directory),
    prompt: body.trim() || `You are the ${f.name} subagent of Sage. ${f.description}`,
    source: { file, scope },
  };
}

function workingDirectoryOf(value: string | undefined): WorkingDirectory {
  if (value === undefined || value === 'inherited' || value === 'inherit') return { kind: 'inherited' };
  if (value === 'process') return { kind: 'process' };
  return { kind: 'explicit', path: value };
}

export interface SubagentCatalog {
  /** Agent files first (only the user's own may replace a built-in type of the same name), then the built-ins. */
  agents: SubagentDefinition[];
  problems: DefinitionProblem[];
  untrusted: string[];
}

/** The subagent types a run in `cwd` can start: agent files of each agents folder, then the built-ins. */
export function discoverSubagents(cwd: string, home: string): SubagentCatalog {
  const { dirs, untrusted } = definitionDirs('agents', cwd, home);
  const agents: SubagentDefinition[] = [];
  const problems: DefinitionProblem[] = [];
  for (const { dir, scope } of dirs) {
    if (!existsSync(dir)) continue;
    let files: string[];
    try {
      files = readdirSync(dir).filter((f) => f.endsWith('.md')).sort();
    } catch {
      problems.push({ file: dir, field: '(folder)', message: 'cannot be read' });
      continue;
    }
    for (const name of files) {
      const loaded = loadAgentFile(join(dir, name), scope);
      if ('field' in loaded) problems.push(loaded);
      else if (scope === 'project' && BUILTIN_SUBAGENTS.some((b) => b.name === loaded.name)) {
        // A repository's file must not turn the read-only Explore or Plan into something else.
        problems.push({ file: join(dir, name), field: 'name', message: `"${loaded.name}" is a built-in subagent type, which a project's agent file cannot replace; this file is ignored (rename it)` });
      } else if (agents.some((a) => a.name === loaded.name)) problems.push({ file: join(dir, name), field: 'name', message: `"${loaded.name}" is already defined by an earlier folder; this one is ignored` });
      else agents.push(loaded);
    }
  }
  for (const builtin of BUILTIN_SUBAGENTS) if (!agents.some((a) => a.name === builtin.name)) agents.push(builtin);
  return { agents, problems, untrusted };
}
