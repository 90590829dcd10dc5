import { describe, expect, it } from 'vitest';
import { ToolRegistry } from '../registry.js';
import { builtinTools } from './index.js';

describe('builtinTools', () => {
  it('returns every built-in under its Claude Code name, each registrable with a JSON Schema', () => {
    const registry = new ToolRegistry(builtinTools(), '/project');
    expect(registry.names().sort()).toEqual(['AskUserQuestion', 'Bash', 'Edit', 'Glob', 'Grep', 'Read', 'WebFetch', 'WebSearch', 'Write']);
    const grep = registry.specs().find((spec) => spec.name === 'Grep')!;
    expect(Object.keys(grep.inputSchema.properties as object)).toEqual([
      'pattern', 'path', 'glob', 'type', 'output_mode', '-i', '-n', '-A', '-B', '-C', 'head_limit', 'multiline',
    ]);
  });

  it('gives the gate the risk, read-only flag and resource of each tool', () => {
    const registry = new ToolRegistry(builtinTools(), '/project');
    const bash = registry.gateInfoOf('Bash')!;
    // The gate's shell classifier judges the command itself; the tool declares a flat MEDIUM.
    expect(bash.risk({ command: 'rm -rf /' })).toBe('MEDIUM');
    expect(bash.permissionResource({ command: 'ls' })).toBe('ls');
    expect(registry.gateInfoOf('Read')!.permissionResource({ file_path: 'a.ts' })).toBe('/project/a.ts');
    expect(registry.gateInfoOf('Edit')!.risk({})).toBe('MEDIUM');
    expect(['Read', 'Glob', 'Grep'].every((name) => registry.gateInfoOf(name)!.readOnly)).toBe(true);
    expect(['Bash', 'Write', 'Edit'].some((name) => registry.gateInfoOf(name)!.readOnly)).toBe(false);
  });
});
