import { describe, expect, it } from 'vitest';
import { builtinTools } from '../tool/builtin/index.js';
import { builtinToolInfo } from './builtin-tool-traits.js';

describe('builtinToolInfo', () => {
  // Callers with only a tool name (`sage permissions check`) must be judged as the run judges the tool itself.
  it.each(builtinTools().map((tool) => [tool.name, tool] as const))('%s: the same read-only flag, risk and interaction as the tool', (_name, tool) => {
    const info = builtinToolInfo(tool.name);
    expect(info.readOnly).toBe(tool.readOnly);
    expect(info.requiresUserInteraction).toBe(tool.requiresUserInteraction ?? false);
    if (typeof tool.risk === 'string') expect(info.risk({})).toBe(tool.risk);
  });

  it('WebSearch is not read-only: the query leaves the machine, so rules or a person decide', () => {
    const info = builtinToolInfo('WebSearch');
    expect(info).toMatchObject({ readOnly: false });
    expect(info.risk({ query: 'x' })).toBe('MEDIUM');
    expect(info.permissionResource?.({ query: 'sage agent runtime' })).toBe('sage agent runtime');
  });
});
