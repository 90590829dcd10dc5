import { describe, expect, it } from 'vitest';
import { ToolRegistry } from './registry.js';
import { builtinTools } from './builtin/index.js';

describe('ToolRegistry gate views', () => {
  it('shares one view of a tool between the runs of one folder, and keeps folders apart', () => {
    const tools = builtinTools();
    const a = new ToolRegistry(tools, '/project-a');
    const b = new ToolRegistry(tools, '/project-a');
    const other = new ToolRegistry(tools, '/project-b');
    expect(b.gateInfoOf('Read')).toBe(a.gateInfoOf('Read'));
    expect(other.gateInfoOf('Read')).not.toBe(a.gateInfoOf('Read'));
    // Each run's relative paths resolve against its own folder, whichever registry was made first.
    expect(a.gateInfoOf('Read')!.permissionResource({ file_path: 'x.ts' })).toBe('/project-a/x.ts');
    expect(other.gateInfoOf('Read')!.permissionResource({ file_path: 'x.ts' })).toBe('/project-b/x.ts');
    expect(a.gateInfoOf('Nope')).toBeUndefined();
  });

  it('a shared view cannot be changed by one run under another', () => {
    const tools = builtinTools();
    const view = new ToolRegistry(tools, '/p').gateInfoOf('Bash')!;
    expect(() => Object.assign(view, { readOnly: true })).toThrow(TypeError);
    expect(new ToolRegistry(tools, '/p').gateInfoOf('Bash')!.readOnly).toBe(false);
  });

  it('a tool object of its own (a per-run tool of the same name) gets its own view', () => {
    const [read] = builtinTools().filter((t) => t.name === 'Read');
    const mine = { ...read!, readOnly: false };
    expect(new ToolRegistry([mine], '/p').gateInfoOf('Read')!.readOnly).toBe(false);
    expect(new ToolRegistry([read!], '/p').gateInfoOf('Read')!.readOnly).toBe(true);
  });
});
