import type { InteractionView } from './types';

/** A run's "what next?" prompt after a finished turn is a conversation, not work waiting in a queue. */
export function needsPerson(i: InteractionView): boolean {
  return i.status === 'pending' && i.request.metadata?.['purpose'] !== 'next-message';
}

/** What is asked, in words: "Run a command", with the command or path it concerns. */
export function describe(i: InteractionView): { what: string; detail?: string; risk?: string } {
  const r = i.request;
  const meta = r.metadata ?? {};
  const risk = typeof meta['risk'] === 'string' ? meta['risk'] : undefined;
  if (r.kind === 'confirm' && r.toolName) {
    const input = (r.input ?? {}) as Record<string, unknown>;
    const text = (k: string) => (typeof input[k] === 'string' ? (input[k] as string) : undefined);
    const path = typeof meta['path'] === 'string' ? meta['path'] : (text('file_path') ?? text('path'));
    const words: Record<string, [string, string | undefined]> = {
      Bash: ['Run a command', text('command')],
      Write: ['Write a file', path],
      Edit: ['Edit a file', path],
      MultiEdit: ['Edit a file', path],
      Read: ['Read a file', path],
      WebFetch: ['Fetch a web page', text('url')],
      WebSearch: ['Search the web', text('query')],
    };
    const [what, detail] = words[r.toolName] ?? [`Use ${r.toolName}`, undefined];
    return { what, detail: detail ?? r.title, risk };
  }
  if (r.kind === 'questions') return { what: r.questions.length > 1 ? `Answer ${r.questions.length} questions` : 'Answer a question', detail: r.questions[0]?.question, risk };
  if (r.kind === 'input') return { what: 'Type an answer', detail: r.title, risk };
  if (r.kind === 'select') return { what: 'Pick an option', detail: r.title, risk };
  return { what: 'Answer a request', detail: r.title, risk };
}

export function loadPending(api: <T>(method: string, path: string) => Promise<T>): Promise<InteractionView[]> {
  return api<{ interactions: InteractionView[] }>('GET', '/interactions?status=pending&limit=200').then((r) => r.interactions.filter(needsPerson));
}
