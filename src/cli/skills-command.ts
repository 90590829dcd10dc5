/**
 * `sage skills list [--json]` and `sage agents list [--json]`: the skills (SKILL.md) and subagent
 * types a run in this folder gets, and the files that were skipped, each with the field at fault.
 */
import type { Command } from 'commander';
import { homedir } from 'node:os';
import type { DefinitionProblem } from '../skills/index.js';
import { discoverSkills } from '../skills/index.js';
import { discoverSubagents } from '../subagents/index.js';

const home = () => process.env.SAGE_HOME || homedir();

function printProblems(problems: readonly DefinitionProblem[], untrusted: readonly string[]): void {
  for (const p of problems) process.stderr.write(`sage: skipped ${p.file}: ${p.field}: ${p.message}\n`);
  for (const dir of untrusted) process.stderr.write(`sage: not read: ${dir} (this folder is not trusted; trust it with: sage trust)\n`);
}

export function registerSkillsCommands(program: Command): void {
  const skills = program.command('skills').description('skills (SKILL.md) for runs in this folder');
  skills
    .command('list')
    .description('list the skills a run here gets, by priority, and the files skipped')
    .option('--json', 'one JSON object: skills, problems, untrusted folders')
    .action(async (opts: { json?: boolean }) => {
      const catalog = discoverSkills(process.cwd(), home());
      if (opts.json) {
        const out = catalog.skills.map(({ instructions, ...rest }) => ({ ...rest, instructionChars: instructions.length }));
        process.stdout.write(`${JSON.stringify({ skills: out, problems: catalog.problems, untrusted: catalog.untrusted }, null, 2)}\n`);
        return;
      }
      if (catalog.skills.length === 0) process.stdout.write('No skills. Add one as .sage/skills/<name>/SKILL.md (or ~/.sage/skills/, .claude/skills/).\n');
      for (const s of catalog.skills) {
        const flags = [s.scope, `priority ${s.priority}`, s.userInvocable ? `/${s.name}` : 'model only', s.allowedTools.length ? `allowed: ${s.allowedTools.join(', ')}${s.trusted ? '' : ' (not granted: folder not trusted)'}` : ''].filter(Boolean);
        process.stdout.write(`${s.name}  ${s.description.split('\n')[0]}\n    ${flags.join(' · ')}  ${s.file}\n`);
      }
      printProblems(catalog.problems, catalog.untrusted);
    });

  const agents = program.command('agents').description('subagent types (the Task tool) for runs in this folder');
  agents
    .command('list')
    .description('list the subagent types: agent files, then the built-ins')
    .option('--json', 'one JSON object: agents, problems, untrusted folders')
    .action(async (opts: { json?: boolean }) => {
      const catalog = discoverSubagents(process.cwd(), home());
      const rows = catalog.agents.map((a) => ({
        name: a.name,
        description: a.description,
        tools: a.tools ?? 'inherited',
        ...(a.permissionMode ? { permissionMode: a.permissionMode } : {}),
        ...(a.model ? { model: a.model } : {}),
        source: a.source === 'builtin' ? 'builtin' : a.source.file,
      }));
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ agents: rows, problems: catalog.problems, untrusted: catalog.untrusted }, null, 2)}\n`);
        return;
      }
      for (const r of rows) process.stdout.write(`${r.name}  ${r.description.split('\n')[0]}\n    tools: ${Array.isArray(r.tools) ? r.tools.join(', ') : r.tools}${r.permissionMode ? ` · mode ${r.permissionMode}` : ''} · ${r.source}\n`);
      printProblems(catalog.problems, catalog.untrusted);
    });
}
