import { z } from 'zod';
import { ModelError, InvalidInputError } from '../errors/index.js';
import { systemClock } from './recovery/clock.js';
import { jsonErrorPlace, readScriptFile, type ReadScriptOptions } from './script-file.js';
import type { Model, ModelRequest, ModelStreamPart } from './types.js';

export const scriptedTurnSchema = z
  .object({
    text: z.string().optional(),
    toolCalls: z
      .array(z.object({ name: z.string().min(1), input: z.record(z.string(), z.unknown()).default({}), id: z.string().optional() }).strict())
      .optional(),
  })
  .strict()
  .refine((t) => t.text !== undefined || (t.toolCalls?.length ?? 0) > 0, 'a turn needs "text" or at least one tool call');

const turnsSchema = z.array(scriptedTurnSchema).min(1, 'a script needs at least one turn');

/**
 * `agents` plays subagents: a subagent run of type T plays `agents[T].turns`, counting its own
 * assistant turns, while the main run plays `turns`.
 */
export const scriptSchema = z
  .object({
    turns: turnsSchema,
    agents: z.record(z.string().min(1), z.object({ turns: turnsSchema }).strict()).optional(),
  })
  .strict();

export type ScriptedTurn = z.infer<typeof scriptedTurnSchema>;
export type Script = z.infer<typeof scriptSchema>;

/** Characters per streamed text chunk: small enough that a front end visibly streams. */
const CHUNK = 16;

/**
 * A model that plays a script: the i-th call returns turn i, where i counts the assistant turns
 * already in the conversation, so a resumed run continues where it left off. No network.
 */
export class ScriptedModel implements Model {
  readonly specificationVersion = 'sage.model.v1' as const;
  readonly contextWindow = 200_000;

  constructor(
    readonly script: Script,
    readonly id = 'scripted:inline',
    private readonly chunkDelayMs = 0,
  ) {}

  /**
   * The turn's parts. Without a chunk delay nothing is waited for, so the stream is also a plain
   * (synchronous) iterable that the loop reads without a promise per part; `for await` sees the
   * same parts in the same order either way.
   */
  stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    return this.chunkDelayMs > 0 ? this.delayedParts(request) : new ScriptedStream(this, request);
  }

  /** The model a subagent of `type` plays: the script's `agents[type]`; a missing entry fails clearly. */
  forAgent(type: string): ScriptedModel {
    const agent = this.script.agents?.[type];
    if (!agent) {
      throw new ModelError(`The script has no "agents.${type}" entry for the ${type} subagent; add { "agents": { "${type}": { "turns": [...] } } } to it.`, { code: 'script_no_agent' });
    }
    return new ScriptedModel({ turns: agent.turns }, `${this.id}#${type}`, this.chunkDelayMs);
  }

  /** The turn for this request; a call past the last turn fails clearly. */
  private turnFor(request: ModelRequest): { turn: ScriptedTurn; index: number } {
    let index = 0;
    for (const m of request.messages) if (m.role === 'assistant') index++;
    const turn = this.script.turns[index];
    if (!turn) {
      throw new ModelError(
        `The script has ${this.script.turns.length} turn(s) and the run asked for turn ${index + 1}; add turns to the script or end it with a text-only turn.`,
        { code: 'script_exhausted' },
      );
    }
    return { turn, index };
  }

  /** @internal The parts, made as they are read (the error of a missing turn on the first read). */
  *parts(request: ModelRequest): Generator<ModelStreamPart> {
    const { turn, index } = this.turnFor(request);
    const text = turn.text ?? '';
    for (let i = 0; i < text.length; i += CHUNK) {
      if (request.signal?.aborted) throw request.signal.reason ?? new Error('aborted');
      yield { type: 'text-delta', text: text.slice(i, i + CHUNK) };
    }
    yield* this.callsAndFinish(request, turn, index, text);
  }

  private async *delayedParts(request: ModelRequest): AsyncGenerator<ModelStreamPart> {
    const { turn, index } = this.turnFor(request);
    const text = turn.text ?? '';
    for (let i = 0; i < text.length; i += CHUNK) {
      if (request.signal?.aborted) throw request.signal.reason ?? new Error('aborted');
      await systemClock.sleep(this.chunkDelayMs, request.signal);
      yield { type: 'text-delta', text: text.slice(i, i + CHUNK) };
    }
    yield* this.callsAndFinish(request, turn, index, text);
  }

  private *callsAndFinish(request: ModelRequest, turn: ScriptedTurn, index: number, text: string): Generator<ModelStreamPart> {
    const calls = turn.toolCalls ?? [];
    for (let c = 0; c < calls.length; c++) {
      const call = calls[c]!;
      yield { type: 'tool-call', call: { id: call.id ?? `call_${index}_${c}`, name: call.name, input: call.input } };
    }
    yield {
      type: 'finish',
      finishReason: calls.length > 0 ? 'tool-calls' : 'stop',
      usage: { inputTokens: estimate(request), outputTokens: Math.ceil((text.length + JSON.stringify(calls).length) / 4) },
    };
  }
}

/** A scripted turn's stream: iterable with and without `await`, read once per request like a generator. */
class ScriptedStream implements AsyncIterable<ModelStreamPart>, Iterable<ModelStreamPart> {
  constructor(
    private readonly model: ScriptedModel,
    private readonly request: ModelRequest,
  ) {}

  [Symbol.iterator](): Iterator<ModelStreamPart> {
    return this.model.parts(this.request);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ModelStreamPart> {
    yield* this.model.parts(this.request);
  }
}

function estimate(request: ModelRequest): number {
  let chars = 0;
  for (const m of request.messages) chars += m.content.length;
  return Math.ceil(chars / 4);
}

/**
 * Validates a script object; errors name the field and the problem but never quote the input
 * (an unknown key's name is a byte of whatever file was named; only the count is said).
 */
export function parseScript(value: unknown, source = 'script'): Script {
  const parsed = scriptSchema.safeParse(value);
  if (!parsed.success) throw new InvalidInputError(`${source}: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
      const message = issue.code === 'unrecognized_keys' ? `Unrecognized key(s): ${issue.keys.length} field(s) the script format does not have` : issue.message;
      return `${path}: ${message}`;
    })
    .join('; ');
}

/** A script file that was read but is not a script; `detail` says what is wrong without quoting it. */
export class ScriptFormatError extends InvalidInputError {
  constructor(
    readonly path: string,
    readonly detail: string,
    message: string,
  ) {
    super(message);
  }
}

export interface LoadScriptOptions extends ReadScriptOptions {
  chunkDelayMs?: number;
}

/**
 * Reads a scripted model from a JSON file (size-capped, regular files only, see readScriptFile).
 * A missing, oversized or malformed file is refused with its path and the problem, and never
 * with the file's content: a JSON syntax error says where, not what.
 */
export function loadScriptedModel(path: string, options: LoadScriptOptions = {}): ScriptedModel {
  const { realPath, text } = readScriptFile(path, options);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const detail = `not valid JSON: ${jsonErrorPlace(error, text)}`;
    throw new ScriptFormatError(realPath, detail, `The script ${realPath} is ${detail}.`);
  }
  const parsed = scriptSchema.safeParse(json);
  if (!parsed.success) {
    const detail = describeIssues(parsed.error);
    throw new ScriptFormatError(realPath, detail, `${realPath}: ${detail}`);
  }
  return new ScriptedModel(parsed.data, `scripted:${path}`, options.chunkDelayMs ?? 0);
}
