import { checkbox, input, select } from '@inquirer/prompts';
import { styleText } from 'node:util';
import { askContextLine, type AskContext } from '../runtime/ask-context.js';
import {
  reasonLine,
  type CombinedItem,
  type InteractionBroker,
  type InteractionRequest,
  type InteractionResponder,
  type ItemResponse,
  type PermissionSuggestion,
} from '../interaction/index.js';

const OTHER = '\u0000other';

export interface TerminalResponderOptions {
  /** Where prompts are drawn: stderr when stdout carries JSON. */
  output: NodeJS.WritableStream;
  /** Called before a prompt is drawn (stop the spinner). */
  beforePrompt?: () => void;
  /** A second Ctrl+C: cancel the run. */
  onCancelRun: () => void;
  /** The task, folder, asker and mode of an ask, shown above its prompt. */
  contextOf?: (request: InteractionRequest) => Promise<AskContext | undefined>;
  /** A `/command` typed as the next message; `{ message }` sends that text instead (a skill's `/name`). */
  onCommand?: (command: string) => 'handled' | 'exit' | 'unknown' | { message: string };
}

type Interrupted = { interrupted: true };

/**
 * Answers interactions at the terminal with @inquirer/prompts, one prompt at a time. Ctrl+C at a
 * prompt rejects that request; a second Ctrl+C within a few seconds cancels the run. A
 * request answered or ended elsewhere has its prompt taken down.
 */
export class TerminalResponder implements InteractionResponder {
  private queue: Array<{ request: InteractionRequest; broker: InteractionBroker }> = [];
  private current: { id: string; controller: AbortController } | undefined;
  private working = false;
  private lastInterrupt = 0;

  constructor(private readonly options: TerminalResponderOptions) {}

  deliver(request: InteractionRequest, broker: InteractionBroker): void {
    this.queue.push({ request, broker });
    if (!this.working) void this.work();
  }

  withdraw(requestId: string): void {
    this.queue = this.queue.filter((q) => q.request.id !== requestId);
    if (this.current?.id === requestId) this.current.controller.abort();
  }

  /** Ctrl+C outside a prompt: the first warns, a second within 3 s cancels. Returns true when it cancelled. */
  interruptOutsidePrompt(): boolean {
    const now = Date.now();
    if (now - this.lastInterrupt < 3_000) {
      this.options.onCancelRun();
      return true;
    }
    this.lastInterrupt = now;
    this.options.output.write(styleText('yellow', '\nPress Ctrl+C again to cancel the run.\n'));
    return false;
  }

  private async work(): Promise<void> {
    this.working = true;
    try {
      for (let next = this.queue.shift(); next; next = this.queue.shift()) {
        const { request, broker } = next;
        if (!broker.isPending(request.id)) continue;
        const controller = new AbortController();
        this.current = { id: request.id, controller };
        this.options.beforePrompt?.();
        try {
          const answer = await this.ask(request, controller.signal);
          if ('interrupted' in answer) await this.interrupted(request, broker);
          else await broker.respond({ requestId: request.id, userId: 'terminal', channel: 'terminal', ...answer });
        } catch (error) {
          const name = (error as Error).name;
          if (name === 'AbortPromptError') continue; // answered or ended elsewhere
          if (name === 'ExitPromptError') await this.interrupted(request, broker);
          else this.options.output.write(styleText('red', `Could not record the answer: ${(error as Error).message}\n`));
        } finally {
          this.current = undefined;
        }
      }
    } finally {
      this.working = false;
    }
  }

  private async interrupted(request: InteractionRequest, broker: InteractionBroker): Promise<void> {
    const now = Date.now();
    const second = now - this.lastInterrupt < 5_000;
    this.lastInterrupt = now;
    if (second) {
      this.options.output.write(styleText('yellow', 'Cancelling the run.\n'));
      this.options.onCancelRun();
      return;
    }
    this.options.output.write(styleText('yellow', 'Rejected (Ctrl+C). Press Ctrl+C again to cancel the run.\n'));
    if (request.kind === 'confirm') {
      await broker.respond({ requestId: request.id, kind: 'confirm', confirmed: false, message: 'The user pressed Ctrl+C to reject this request.', userId: 'terminal', channel: 'terminal' }).catch(() => undefined);
    } else {
      await broker.close(request.id, 'cancelled', 'the user pressed Ctrl+C');
    }
  }

  private async ask(request: InteractionRequest, signal: AbortSignal): Promise<Omit<ItemResponse, 'kind'> & { kind: InteractionRequest['kind']; responses?: Record<string, ItemResponse>; remember?: 'session' | 'local' | 'project' | 'user'; rule?: string } | Interrupted> {
    const ctx = { output: this.options.output, signal, clearPromptOnDone: false };
    if (request.kind === 'combined') {
      const responses: Record<string, ItemResponse> = {};
      this.options.output.write(`${styleText('bold', request.title)}\n`);
      for (const item of request.items) responses[item.key] = { ...(await this.askItem(item, ctx)), kind: item.kind } as ItemResponse;
      return { kind: 'combined', responses };
    }
    if (request.kind === 'input' && request.metadata?.purpose === 'next-message') {
      for (;;) {
        const text = await input({ message: styleText('cyan', '›') }, ctx);
        const trimmed = text.trim();
        if (trimmed.startsWith('/')) {
          const result = this.options.onCommand?.(trimmed) ?? 'unknown';
          if (result === 'exit') return { kind: 'input', text: '' };
          if (typeof result === 'object') return { kind: 'input', text: result.message };
          if (result === 'unknown') this.options.output.write(styleText('yellow', `Unknown command ${trimmed}; /help lists them.\n`));
          continue;
        }
        if (trimmed !== '') return { kind: 'input', text };
      }
    }
    if (request.kind === 'confirm') return this.askConfirm(request, ctx);
    return { ...(await this.askItem(request, ctx)), kind: request.kind };
  }

  private async askItem(item: InteractionRequest | CombinedItem, ctx: { output: NodeJS.WritableStream; signal: AbortSignal }): Promise<Omit<ItemResponse, 'kind'>> {
    switch (item.kind) {
      case 'input':
        return { text: await input({ message: item.title, default: item.defaultValue, required: item.required }, ctx) };
      case 'select': {
        const choices = item.options.map((o) => ({ name: o.label, value: o.value, description: o.description }));
        // The form's default (an MCP server's `default`) is chosen at first.
        const defaults = item.defaultSelected ?? [];
        if (item.multiple) return { selected: await checkbox({ message: item.title, choices: choices.map((c) => ({ ...c, checked: defaults.includes(c.value) })), required: true }, ctx) };
        return { selected: [await select({ message: item.title, choices, ...(defaults[0] !== undefined ? { default: defaults[0] } : {}) }, ctx)] };
      }
      case 'confirm': {
        const yes = await select({ message: item.title, choices: [{ name: item.confirmText ?? 'Yes', value: true }, { name: item.cancelText ?? 'No', value: false }], ...('defaultConfirmed' in item && item.defaultConfirmed !== undefined ? { default: item.defaultConfirmed } : {}) }, ctx);
        return { confirmed: yes };
      }
      case 'questions': {
        const answers: Record<string, string | string[]> = {};
        for (const q of item.questions) {
          const choices = [...q.options.map((o) => ({ name: o.label, value: o.label, description: o.description || undefined })), { name: 'Other…', value: OTHER, description: 'Type your own answer' }];
          const message = `${styleText('inverse', ` ${q.header} `)} ${q.question}`;
          if (q.multiSelect) {
            const picked = await checkbox({ message, choices, required: true }, ctx);
            const other = picked.includes(OTHER) ? await input({ message: 'Your answer', required: true }, ctx) : undefined;
            answers[q.question] = [...picked.filter((p) => p !== OTHER), ...(other ? [other] : [])];
          } else {
            const picked = await select({ message, choices }, ctx);
            answers[q.question] = picked === OTHER ? await input({ message: 'Your answer', required: true }, ctx) : picked;
          }
        }
        return { answers };
      }
      case 'combined':
        throw new Error('A combined request cannot be nested in another.');
    }
  }

  private async askConfirm(request: Extract<InteractionRequest, { kind: 'confirm' }>, ctx: { output: NodeJS.WritableStream; signal: AbortSignal }) {
    const out = this.options.output;
    const tool = request.toolName ?? 'Tool';
    const preview = (request.metadata ?? {}) as { risk?: unknown; diff?: unknown; previewError?: unknown; path?: unknown };
    // UNKNOWN is treated as HIGH, as the gate and the web page do.
    const high = preview.risk === 'HIGH' || preview.risk === 'UNKNOWN';
    out.write(`\n${styleText(['bold', high ? 'red' : 'yellow'], `◆ ${tool} wants permission`)}\n`);
    // Which task, folder and asker this is for; a context that cannot be read leaves the prompt as it was.
    const context = await this.options.contextOf?.(request).catch(() => undefined);
    // The task is clipped harder here: the line should fit a terminal's width.
    if (context) out.write(`  ${styleText('dim', askContextLine(context, { risk: !high, taskMax: 40 }))}\n`);
    if (high) out.write(`  ${styleText(['bold', 'red'], preview.risk === 'HIGH' ? 'High risk' : 'Unknown risk')} ${styleText('red', `— ${HIGH_RISK_WARNING}`)}\n`);
    out.write(typeof preview.diff === 'string' ? formatDiff(preview.diff) : formatInput(tool, request.input));
    if (typeof preview.previewError === 'string') out.write(`  ${styleText('yellow', `No preview: ${preview.previewError}`)}\n`);
    if (request.reason) out.write(`  ${styleText('dim', `why: ${reasonLine(request)}`)}\n`);
    type Choice = { action: 'once' } | { action: 'always'; suggestion: PermissionSuggestion } | { action: 'edit' } | { action: 'deny' } | { action: 'deny-message' };
    const choices: Array<{ name: string; value: Choice }> = [{ name: 'Allow once', value: { action: 'once' } }];
    // "Always" is never offered for a high-risk call: each one is looked at.
    for (const suggestion of high ? [] : (request.suggestions ?? [])) {
      if (suggestion.behavior !== 'allow') continue;
      choices.push({ name: `Allow always: ${suggestion.rule}`, value: { action: 'always', suggestion } });
    }
    if (request.editable !== false && request.input !== undefined) choices.push({ name: 'Edit the input, then allow', value: { action: 'edit' } });
    const deny: Choice = { action: 'deny' };
    choices.push({ name: 'Deny', value: deny }, { name: 'Deny and tell the agent why', value: { action: 'deny-message' } });
    // For a high-risk call the cursor starts on Deny: one stray Enter must never approve it.
    const choice = await select<Choice>({ message: request.title, choices, ...(high ? { default: deny } : {}) }, ctx);
    switch (choice.action) {
      case 'once':
        return { kind: 'confirm' as const, confirmed: true };
      case 'always': {
        const where = await select<'session' | 'local' | 'project' | 'user'>(
          {
            message: `Remember ${choice.suggestion.rule} where?`,
            default: rememberOf(choice.suggestion.destination),
            choices: [
              { name: 'For this session only', value: 'session' },
              { name: 'In this project, just for me (.sage/settings.local.json)', value: 'local' },
              { name: 'In this project, for everyone (.sage/settings.json)', value: 'project' },
              { name: 'In all my projects (~/.sage/settings.json)', value: 'user' },
            ],
          },
          ctx,
        );
        return { kind: 'confirm' as const, confirmed: true, remember: where, rule: choice.suggestion.rule };
      }
      case 'deny':
        return { kind: 'confirm' as const, confirmed: false };
      case 'deny-message':
        return { kind: 'confirm' as const, confirmed: false, message: await input({ message: 'Message to the agent', required: true }, ctx) };
      case 'edit':
        return { kind: 'confirm' as const, confirmed: true, updatedInput: await editInput(tool, request.input, ctx) };
    }
  }
}

async function editInput(tool: string, value: unknown, ctx: { output: NodeJS.WritableStream; signal: AbortSignal }): Promise<unknown> {
  const current = (value ?? {}) as Record<string, unknown>;
  if (tool === 'Bash' && typeof current.command === 'string') {
    return { ...current, command: await input({ message: 'Command', default: current.command, prefill: 'editable', required: true }, ctx) };
  }
  const text = await input(
    {
      message: 'Input (JSON)',
      default: JSON.stringify(value),
      prefill: 'editable',
      validate: (t) => {
        try {
          JSON.parse(t);
          return true;
        } catch (error) {
          return `Not valid JSON: ${(error as Error).message}`;
        }
      },
    },
    ctx,
  );
  return JSON.parse(text);
}

/** The web page's words for a high-risk ask, so both surfaces warn alike. */
const HIGH_RISK_WARNING = 'This can delete or overwrite things that are hard to get back, or act outside the project. Read exactly what will run before you allow it.';

/** A unified diff, coloured: removed lines red, added green, hunk headers cyan. */
export function formatDiff(diff: string): string {
  const lines = diff.replace(/\n$/, '').split('\n').map((line) => {
    if (line.startsWith('+++') || line.startsWith('---')) return styleText('bold', line);
    if (line.startsWith('@@')) return styleText('cyan', line);
    if (line.startsWith('+')) return styleText('green', line);
    if (line.startsWith('-')) return styleText('red', line);
    return line;
  });
  return `${lines.map((l) => `  ${l}`).join('\n')}\n`;
}

function formatInput(tool: string, value: unknown): string {
  const v = (value ?? {}) as Record<string, unknown>;
  if (tool === 'Bash' && typeof v.command === 'string') return `  ${styleText('cyan', '$')} ${v.command}\n`;
  if (tool === 'Edit' && typeof v.file_path === 'string') {
    const minus = String(v.old_string ?? '').split('\n').map((l) => styleText('red', `  - ${l}`));
    const plus = String(v.new_string ?? '').split('\n').map((l) => styleText('green', `  + ${l}`));
    return `  ${v.file_path}\n${[...minus, ...plus].join('\n')}\n`;
  }
  return `${JSON.stringify(value, null, 2).split('\n').map((l) => `  ${l}`).join('\n')}\n`;
}

function rememberOf(destination: PermissionSuggestion['destination']): 'session' | 'local' | 'project' | 'user' {
  return destination === 'session' ? 'session' : destination === 'localSettings' ? 'local' : destination === 'projectSettings' ? 'project' : 'user';
}
