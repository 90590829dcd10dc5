import { styleText } from 'node:util';
import type { RunEvent } from '../events/index.js';
import { deniedForPerson, forPerson, summarizeInput, summarizeResult } from './format.js';
import { Spinner } from './spinner.js';

export interface RendererOptions {
  /** Show whole tool results rather than their first lines. */
  expand: boolean;
  verbose: boolean;
}

/**
 * The one place the CLI turns run events into terminal output, in two forms: `TerminalRenderer`
 * for a run this process drives with a person watching (`sage run`, `sage`), and one line per event
 * (`renderEventLine`, `eventLinePrinter`) for the run log commands (`sage runs show`, `resume`,
 * `recover`), where events may come from another process and no spinner makes sense.
 */

/**
 * Draws a run's events in the terminal: streamed assistant text on stdout, each tool call with
 * its input and a short result, spinners while the model thinks and tools run.
 */
export class TerminalRenderer {
  readonly spinner = new Spinner();
  private atLineStart = true;
  /** Calls announced but whose header is not printed yet: headers print just before a prompt or a result, so concurrent calls stay readable. */
  private readonly calls = new Map<string, { toolName: string; input: unknown; printed: boolean; denied?: { source: string; reason: string } }>();
  private readonly out = process.stdout;

  constructor(private readonly options: RendererOptions) {}

  render(event: RunEvent): void {
    switch (event.type) {
      case 'state.changed':
        if (event.data.to.phase === 'calling_model') this.spinner.start('Thinking…');
        return;
      case 'message.delta':
        this.spinner.stop();
        this.write(event.data.text);
        return;
      case 'message.completed':
        this.spinner.stop();
        this.newline();
        return;
      case 'tool.requested':
        this.calls.set(event.data.toolCallId, { toolName: event.data.toolName, input: event.data.input, printed: false });
        return;
      case 'permission.decided': {
        const call = this.calls.get(event.data.toolCallId);
        if (call) call.denied = event.data.behavior === 'deny' ? { source: event.data.source, reason: event.data.reason } : undefined;
        if (this.options.verbose) this.out.write(styleText('dim', `  ⎿ ${event.data.behavior} (${event.data.source}${event.data.rule ? `: ${event.data.rule}` : ''}) ${forPerson(event.data.reason)}\n`));
        return;
      }
      case 'tool.started':
        this.spinner.start(`Running ${event.data.toolName}(${summarizeInput(event.data.toolName, event.data.input)})…`);
        return;
      case 'tool.completed': {
        this.spinner.stop();
        this.header(event.data.toolCallId);
        const denied = this.calls.get(event.data.toolCallId)?.denied;
        this.calls.delete(event.data.toolCallId);
        // A call that did not run: say why in a person's words (its content is the model's instructions).
        if (denied) {
          this.out.write(`  ⎿ ${styleText('red', deniedForPerson(denied))}\n`);
          return;
        }
        const lines = summarizeResult(forPerson(event.data.content), this.options.expand ? Number.MAX_SAFE_INTEGER : 5, event.data.toolName === 'Bash');
        const paint = (l: string) => (event.data.isError ? styleText('red', l) : styleText('dim', l));
        lines.forEach((line, i) => this.out.write(`${i === 0 ? '  ⎿ ' : '    '}${paint(line)}\n`));
        return;
      }
      case 'interaction.requested':
        this.spinner.stop();
        if (event.data.request.toolCallId) this.header(String(event.data.request.toolCallId));
        this.newline();
        return;
      case 'chain.step': {
        this.spinner.stop();
        this.newline();
        const ok = event.data.exitCode === 0;
        const exit = event.data.exitCode === null ? 'killed' : `exit ${event.data.exitCode}`;
        this.out.write(`${styleText(ok ? 'green' : 'red', '●')} ${styleText('bold', event.data.step)}${styleText('dim', `(${oneLine(event.data.command, 80)}) · ${exit} · ${(event.data.durationMs / 1000).toFixed(1)} s`)}\n`);
        const lines = summarizeResult(event.data.output, this.options.expand ? Number.MAX_SAFE_INTEGER : 5, true);
        lines.forEach((line, i) => this.out.write(`${i === 0 ? '  ⎿ ' : '    '}${ok ? styleText('dim', line) : styleText('red', line)}\n`));
        return;
      }
      case 'agent.sandbox':
        if (event.data.warning) process.stderr.write(`${styleText('yellow', 'warning:')} ${event.data.warning}\n`);
        else if (this.options.verbose) this.out.write(styleText('dim', `(${event.data.agentName} runs in its OS sandbox${event.data.masked.length ? `; hidden from it: ${event.data.masked.join(', ')}` : ''})\n`));
        return;
      case 'agent.session':
        if (this.options.verbose && event.data.costUsd === undefined) this.out.write(styleText('dim', `(${event.data.agentName} session ${event.data.sessionId})\n`));
        return;
      case 'context.compacted':
        this.out.write(styleText('dim', `(compacted ${event.data.removedMessages} older messages: ${event.data.tokensBefore} → ${event.data.tokensAfter} tokens)\n`));
        return;
      case 'run.completed': {
        this.spinner.stop();
        this.newline();
        const s = event.data.stats;
        const status = event.data.status === 'completed' ? styleText('green', '✔ Done') : styleText('yellow', `■ Stopped (${event.data.status})`);
        process.stderr.write(`${status} ${styleText('dim', `· ${s.steps} step(s) · ${s.toolCalls} tool call(s) · ${((s.durationMs ?? 0) / 1000).toFixed(1)} s`)}\n`);
        return;
      }
      case 'run.failed':
        this.spinner.stop();
        this.newline();
        process.stderr.write(`${styleText('red', '✖ Failed:')} ${event.data.message}\n`);
        return;
      case 'run.cancelled':
        this.spinner.stop();
        this.newline();
        process.stderr.write(`${styleText('yellow', '■ Cancelled')} ${styleText('dim', event.data.reason)}\n`);
        return;
      case 'run.suspended':
        this.spinner.stop();
        process.stderr.write(`${styleText('yellow', '⏸ Suspended:')} ${event.data.reason}\n`);
        return;
      default:
        return;
    }
  }

  private header(toolCallId: string): void {
    const call = this.calls.get(toolCallId);
    if (!call || call.printed) return;
    call.printed = true;
    this.newline();
    this.out.write(`${styleText('green', '●')} ${styleText('bold', call.toolName)}${styleText('dim', `(${summarizeInput(call.toolName, call.input)})`)}\n`);
  }

  private write(text: string): void {
    this.out.write(text);
    this.atLineStart = text.endsWith('\n');
  }

  private newline(): void {
    if (!this.atLineStart) this.out.write('\n');
    this.atLineStart = true;
  }
}

/** One short line per event, for `sage runs show` and `sage runs resume` without --json. */
export function renderEventLine(event: RunEvent): string | undefined {
  const d = event.data as Record<string, unknown>;
  switch (event.type) {
    case 'run.started':
      return `▶ started: ${String(d.task)}`;
    case 'run.resumed':
      return `▶ resumed${d.interactionId ? ` (${String(d.interactionId)})` : ''}`;
    case 'run.suspended':
      return `⏸ suspended${d.interactionId ? `, waiting for ${String(d.interactionId)}` : ''}: ${String(d.reason)}`;
    case 'run.completed':
      return `✔ ${String(d.status)}: ${oneLine(String(d.finalText), 200)}`;
    case 'run.failed':
      return `✖ failed (${String(d.code)}): ${String(d.message)}`;
    case 'run.cancelled':
      return `✖ cancelled: ${String(d.reason)}`;
    case 'message.completed':
      return d.text ? `  ${oneLine(String(d.text), 200)}` : undefined;
    case 'tool.started':
      return `  → ${String(d.toolName)} ${oneLine(JSON.stringify(d.input), 120)}`;
    case 'permission.decided':
      return d.behavior === 'ask' ? undefined : `  ${d.behavior === 'allow' ? '✓' : '⛔'} ${String(d.toolName)} ${String(d.behavior)}: ${forPerson(String(d.reason))}`;
    case 'interaction.requested': {
      const request = d.request as { id?: string; title?: string; kind?: string };
      return `  ? ${request.title ?? request.kind} — answer with: sage respond ${request.id} …`;
    }
    case 'interaction.answered':
      return `  ✓ answered ${String(d.interactionId)}`;
    case 'chain.step':
      return `  ${d.exitCode === 0 ? '●' : '✖'} ${String(d.step)} (${oneLine(String(d.command), 80)}): exit ${String(d.exitCode)}${d.output ? ` · ${oneLine(String(d.output), 120)}` : ''}`;
    case 'agent.sandbox':
      return d.sandbox === 'off' ? `  ⚠ ${String(d.agentName)} unconfined: ${String(d.warning)}` : `  ◇ ${String(d.agentName)} in its OS sandbox${(d.masked as string[]).length ? `, hiding ${(d.masked as string[]).join(', ')}` : ''}`;
    case 'tool.completed':
      return `  ${d.isError ? '✖' : '←'} ${String(d.toolName)}${d.ungated ? ' (the agent\'s own call, not decided by Sage)' : ''}: ${oneLine(forPerson(String(d.content)), 160)}`;
    case 'agent.session':
      return `  ◇ ${String(d.agentName)} session ${String(d.sessionId)}${typeof d.costUsd === 'number' ? ` · $${d.costUsd.toFixed(4)}` : ''}`;
    case 'interaction.expired':
    case 'interaction.cancelled':
      return `  ✖ ${event.type.slice('interaction.'.length)} ${String(d.interactionId)}: ${String(d.reason)}`;
    default:
      return undefined;
  }
}

/** Text on one line (newlines shown as ⏎), cut to `max` characters. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s*\n\s*/g, ' ⏎ ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Prints each event as it comes: its JSON with --json, else its line (events with no line print nothing). */
export function eventLinePrinter(json: boolean | undefined): (event: RunEvent) => void {
  return json
    ? (event) => printLine(JSON.stringify(event))
    : (event) => {
        const line = renderEventLine(event);
        if (line) printLine(line);
      };
}

function printLine(line: string): void {
  process.stdout.write(`${line}\n`);
}
