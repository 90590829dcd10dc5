import { z } from 'zod';
import type { ToolSpec } from '../model/types.js';
import type { GateToolInfo, RiskLevel } from '../permission/types.js';
import type { Tool } from './types.js';

/** The tools of a run, by name, with their JSON Schemas computed once. */
export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();
  private readonly gateInfo = new Map<string, GateToolInfo>();
  private specsCache: ToolSpec[] | undefined;

  constructor(tools: readonly Tool[] = [], private readonly cwd = process.cwd()) {
    for (const tool of tools) this.register(tool);
  }

  register(tool: Tool): void {
    if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name)) {
      throw new Error(`Tool name "${tool.name}" must be 1-64 letters, digits, "_" or "-".`);
    }
    if (this.tools.has(tool.name)) throw new Error(`A tool named "${tool.name}" is already registered.`);
    this.tools.set(tool.name, tool);
    this.gateInfo.set(tool.name, toGateInfo(tool, this.cwd));
    this.specsCache = undefined;
  }

  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  gateInfoOf(name: string): GateToolInfo | undefined {
    return this.gateInfo.get(name);
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  list(): Tool[] {
    return [...this.tools.values()];
  }

  /** What the model is told about the tools. */
  specs(): ToolSpec[] {
    this.specsCache ??= this.list().map(lazySpec);
    return this.specsCache;
  }
}

/**
 * A tool's spec whose JSON Schema is converted from zod when first read. Converting every built-in
 * tool's schema was about a tenth of the JavaScript a one-turn `sage run` ran (CPU profile, issue 13
 * goal 4); a model that never reads them (the scripted model) need not pay, the others read each once.
 */
function lazySpec(tool: Tool): ToolSpec {
  let json: Record<string, unknown> | undefined;
  return {
    name: tool.name,
    description: tool.description,
    get inputSchema() {
      return (json ??= toJsonSchema(tool.inputSchema));
    },
  };
}

function toJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

function toGateInfo(tool: Tool, cwd: string): GateToolInfo {
  const risk = tool.risk;
  return {
    name: tool.name,
    readOnly: tool.readOnly,
    requiresUserInteraction: tool.requiresUserInteraction ?? false,
    risk: (input: unknown): RiskLevel => (typeof risk === 'function' ? risk(input) : risk),
    permissionResource: (input: unknown) => tool.permissionResource?.(input, { cwd }),
    checkPermissions: (input, ctx) => tool.checkPermissions?.(input, ctx) ?? { behavior: 'passthrough' },
  };
}
