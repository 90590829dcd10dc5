import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MODELS } from '../runtime/default-models.js';
import { ENVIRONMENT_VARIABLES } from './environment-help.js';
import { buildProgram } from './main.js';
import { registerServeCommand } from './serve-command.js';

const src = path.resolve(import.meta.dirname, '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'test-support' ? [] : sourceFiles(full);
    return /\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name) ? [full] : [];
  });
}

async function help(args: string[]): Promise<string> {
  const program = buildProgram();
  registerServeCommand(program);
  let out = '';
  program.configureOutput({ writeOut: (s) => (out += s), writeErr: (s) => (out += s) });
  for (const c of program.commands) c.configureOutput({ writeOut: (s) => (out += s), writeErr: (s) => (out += s) });
  await expect(program.parseAsync(['node', 'sage', ...args])).rejects.toBeInstanceOf(CommanderError);
  return out;
}

describe('the environment variables in help', () => {
  it('lists every SAGE_* variable the source reads', () => {
    const text = sourceFiles(src).map((f) => readFileSync(f, 'utf8')).join('\n');
    // Constants named SAGE_* (not variables) are declared as such; every other SAGE_* word is a variable.
    const constants = new Set([...text.matchAll(/\b(?:const|let|function)\s+(SAGE_[A-Z0-9_]+)/g)].map((m) => m[1]));
    const read = new Set([...text.matchAll(/\bSAGE_[A-Z][A-Z0-9_]*\b/g)].map((m) => m[0]).filter((n) => !constants.has(n)));
    const listed = new Set(ENVIRONMENT_VARIABLES.map((v) => v.name));
    expect([...read].filter((n) => !listed.has(n))).toEqual([]);
    expect(read.size).toBeGreaterThan(5);
  });

  it('lists every variable named in process.env or env reads of the source', () => {
    const text = sourceFiles(src).map((f) => readFileSync(f, 'utf8')).join('\n');
    const names = new Set([...text.matchAll(/\b(?:process\.)?env(?:\.([A-Z][A-Z0-9_]+)|\['([A-Z][A-Z0-9_]+)'\])/g)].map((m) => m[1] ?? m[2]!));
    // Variables Sage passes on or reads only to build paths the way every program does.
    for (const ambient of ['PATH', 'HOME', 'TMP', 'TEMP', 'NODE_OPTIONS']) names.delete(ambient);
    const listed = new Set(ENVIRONMENT_VARIABLES.map((v) => v.name));
    expect([...names].filter((n) => !listed.has(n))).toEqual([]);
  });

  it('sage --help names every variable a person sets, and the default models', async () => {
    const out = await help(['--help']);
    for (const v of ENVIRONMENT_VARIABLES) {
      if (v.internal) expect(out).not.toContain(v.name);
      else expect(out).toContain(v.name);
    }
    for (const d of DEFAULT_MODELS) expect(out).toContain(`${d.spec} (when ${d.variable} is set)`);
  });

  it('sage run --help and sage serve --help name their own variables', async () => {
    const run = await help(['run', '--help']);
    const serve = await help(['serve', '--help']);
    expect(run).toContain('ANTHROPIC_API_KEY');
    expect(run).not.toContain('SAGE_TOKENS');
    expect(serve).toContain('SAGE_TOKENS');
    expect(serve).toContain('SAGE_MODEL');
    expect(serve).not.toContain('(when ANTHROPIC_API_KEY is set)');
  });
});

describe('the README', () => {
  it('has every variable of the table', () => {
    const readme = readFileSync(path.join(src, '..', 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('### Environment variables and default models'), readme.indexOf('**Broken settings stop the run'));
    for (const v of ENVIRONMENT_VARIABLES) if (!v.internal) expect(section).toContain(`\`${v.name}\``);
    for (const d of DEFAULT_MODELS) expect(section).toContain(`\`${d.spec}\``);
  });
});
