import type { ToolSpec } from '../model/types.js';
import type { ToolRegistry } from '../tool/registry.js';

/**
 * The registry's tool specs, reused across runs. Converting a zod schema to JSON Schema costs tens
 * of microseconds and every run builds a fresh registry, so a run of a few steps spent much of its
 * time there. zod schemas are immutable, so a spec is cached by its tool's schema object and used
 * again only while the tool's name and description are the same; anything else asks the registry.
 */
const cache = new WeakMap<object, ToolSpec>();

/**
 * The registry's specs. The run keeps the answer while its registry has the same number of tools
 * (`RunContext.toolSpecs`: a registry only gains tools), so a model call does not copy the list and
 * look every spec up again on every step.
 */
export function toolSpecs(registry: ToolRegistry): ToolSpec[] {
  const tools = registry.list();
  const out: ToolSpec[] = [];
  for (const tool of tools) {
    const spec = cache.get(tool.inputSchema);
    if (!spec || spec.name !== tool.name || spec.description !== tool.description) return fill(registry);
    out.push(spec);
  }
  return out;
}

function fill(registry: ToolRegistry): ToolSpec[] {
  const specs = registry.specs();
  const tools = registry.list();
  for (let i = 0; i < tools.length; i++) cache.set(tools[i]!.inputSchema, specs[i]!);
  return specs;
}
