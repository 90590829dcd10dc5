import { styleText } from 'node:util';
import type { RunEvent } from '../events/index.js';
import type { InteractionRequest, InteractionResponder } from '../interaction/index.js';
import type { AskContext } from '../runtime/ask-context.js';
import type { Run, RunOutcome } from '../loop/index.js';
import { EXIT, type ExitCode } from './exit-codes.js';
import type { RunFlags } from './run-flags.js';
import { TerminalRenderer } from './event-renderer.js';
import type { TerminalResponder } from './terminal-responder.js';

export interface ExecuteRunInput {
  /** Interactive session: what a line starting with `/` does. */
  onCommand?: (command: string) => 'handled' | 'exit' | 'unknown' | { message: string };
}

/** Why a run that needs a person cannot get one, and what to do about it. */
export const NO_TERMINAL_MESSAGE =
  'This run needs a person to answer, but stdin is not a terminal. Re-run with --non-interactive --auto allow|deny (an automatic answer) or --batch (no person: asks become denials).';

export interface TerminalRef {
  run?: Run;
  contextOf?: (request: InteractionRequest) => Promise<AskContext | undefined>;
}

/** What a run in the terminal shows and answers with: the renderer, the prompts, Ctrl+C. */
export interface TerminalSide {
  /** The prompts' callbacks need the run (and the store an ask's context is read from), made after them. */
  ref: TerminalRef;
  responder?: InteractionResponder;
  onEvent: (event: RunEvent) => void;
  /** Drains a run to its end with Ctrl+C handled, then stops the spinner. */
  follow<T>(current: Run, outcome: Promise<T>): Promise<T>;
}

/**
 * The terminal side of a run, the same for an in-memory run and a durable one. The prompts
 * (@inquirer/prompts) are loaded only when a person can answer at this terminal, and before the run
 * starts: --batch, --json pipelines and non-TTY runs never pay for them.
 */
export async function terminalSide(flags: RunFlags, onCommand?: ExecuteRunInput['onCommand']): Promise<TerminalSide> {
  const renderer = flags.json ? undefined : new TerminalRenderer({ expand: flags.expand, verbose: flags.verbose });
  const interactive = !flags.batch && !flags.nonInteractive;
  // Only asked when someone could answer: process.stdin is built on first touch (a stream over the
  // descriptor, with the modules behind it), which a --batch or --non-interactive run never needs.
  const hasTerminal = interactive && Boolean(process.stdin.isTTY);
  const ref: TerminalRef = {};
  let responder: InteractionResponder | undefined;
  let terminal: TerminalResponder | undefined;
  if (interactive && hasTerminal) {
    const { TerminalResponder } = await import('./terminal-responder.js');
    terminal = new TerminalResponder({
      output: flags.json ? process.stderr : process.stdout,
      beforePrompt: () => renderer?.spinner.stop(),
      onCancelRun: () => ref.run?.cancel('cancelled with Ctrl+C'),
      contextOf: (request) => ref.contextOf?.(request) ?? Promise.resolve(undefined),
      onCommand,
    });
    responder = terminal;
  } else if (interactive) {
    // Never hang waiting for a person who cannot answer: fail at once, naming the flags to use.
    responder = { deliver: () => ref.run?.fail('no_terminal', NO_TERMINAL_MESSAGE) };
  }
  const jsonLines = flags.json ? jsonLineWriter(process.stdout) : undefined;
  const onEvent = (event: RunEvent) => {
    if (jsonLines) jsonLines.write(`${JSON.stringify(event)}\n`);
    else renderer!.render(event);
  };
  const follow = async <T>(current: Run, outcome: Promise<T>): Promise<T> => {
    // Ctrl+C while no prompt is up: the first warns, the second cancels. (At a prompt, the prompt
    // itself sees Ctrl+C and rejects just that request.)
    const onSigint = () => {
      if (!terminal) {
        ref.run?.cancel('cancelled with Ctrl+C');
        return;
      }
      terminal.interruptOutsidePrompt();
    };
    process.on('SIGINT', onSigint);
    try {
      for await (const _event of current) {
        // Rendering happens in onEvent, in order and synchronously; this only drains the stream.
      }
      return await outcome;
    } finally {
      process.off('SIGINT', onSigint);
      renderer?.spinner.stop();
      jsonLines?.close();
    }
  };
  return { ref, ...(responder ? { responder } : {}), onEvent, follow };
}

/**
 * The --json event lines, written together once per turn of the event loop: a step emits about ten
 * events, and one write per event (a system call each on a pipe) was a large part of a fast step.
 * Lines keep their order; whatever is pending is written at the latest when the process exits.
 */
function jsonLineWriter(out: NodeJS.WritableStream): { write(line: string): void; close(): void } {
  let pending = '';
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending === '') return;
    const text = pending;
    pending = '';
    out.write(text);
  };
  process.once('exit', flush);
  return {
    write(line) {
      pending += line;
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    /** The run is over: what is pending is written now, and the exit hook is no longer needed. */
    close() {
      flush();
      process.off('exit', flush);
    },
  };
}

export function exitCodeOf(outcome: RunOutcome): ExitCode {
  switch (outcome.status) {
    case 'completed':
    case 'suspended':
      return EXIT.ok;
    case 'cancelled':
      return EXIT.cancelled;
    case 'max_steps':
      process.stderr.write(styleText('yellow', `Stopped after ${outcome.stats.steps} steps (--max-steps).\n`));
      return EXIT.failed;
    case 'failed':
      return EXIT.failed;
  }
}
