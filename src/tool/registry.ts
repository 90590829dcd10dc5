import { z } from 'zod';
import type { ToolSpec } from '../model/types.js';
import type { GateToolInfo, RiskLevel } from '../permission/types.js';
import type { Tool } from './types.js';

/**
 * The gate's view of a tool, per tool object and working folder. It holds no state of a run (the
 * folder is its only input besides the tool), so every run of a tool in the same folder shares one:
 * built per run, the views of ten tools were ~3 KB of each waiting run (40 objects and closures; 1,000
 * chats wait at once in bench/channels.ts). A tool made per run (Task, an MCP server's) gets its own
 * entry, dropped with the tool.
 */
const gateInfoCache = new WeakMap<Tool, Map<string, GateToolInfo>>();

function sharedGateInfo(tool: Tool, cwd: string): GateToolInfo {
  let byCwd = gateInfoCache.get(tool);
  if (!byCwd) {
    byCwd = new Map();
    gateInfoCache.set(tool, byCwd);
  }
  let info = byCwd.get(cwd);
  if (!info) {
    // Frozen: shared by runs, so nobody may change one run's view under another.
    info = Object.freeze(toGateInfo(tool, cwd));
    // A server whose runs work in many folders: keep the recent ones (a view is cheap to make again).
    if (byCwd.size >= 64) byCwd.delete(byCwd.keys().next().value!);
    byCwd.set(cwd, info);
  }
  return info;
}

/** The tools of a run, by name, with their JSON Schemas computed once. */
export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();
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
    this.specsCache = undefined;
  }

  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  gateInfoOf(name: string): GateToolInfo | undefined {
    const tool = this.tools.get(name);
    return tool && sharedGateInfo(tool, this.cwd);
  }

  /** How many tools are registered (tools are only ever added). */
  get size(): number {
    return this.tools.size;
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
 * tool's schema is a large part of a short run's start; a model that never reads them (the scripted
 * model) need not pay, the others read each once.
 */
function lazySpec(tool: Tool): ToolSpec {
  let json: Record<string, unknown> | undefined;
  return {
    name: tool.name,
    description: tool.description,
    get inputSchema() {
      return (json ??= jsonSchemaOf(tool));
    },
  };
}

/**
 * Each tool's JSON Schema as text, converted once per tool object: a run is built again on every
 * resume (an approval answered after the run was released), and converting every built-in tool's
 * schema again each time cost more than the rest of the rebuild. Each run still gets its own copy
 * (parsed from the text), so a model adapter that changes its copy changes no other run's.
 */
const jsonSchemaText = new WeakMap<Tool, string>();

function jsonSchemaOf(tool: Tool): Record<string, unknown> {
  let text = jsonSchemaText.get(tool);
  if (text === undefined) {
    text = JSON.stringify(toJsonSchema(tool.inputSchema));
    jsonSchemaText.set(tool, text);
  }
  return JSON.parse(text) as Record<string, unknown>;
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
