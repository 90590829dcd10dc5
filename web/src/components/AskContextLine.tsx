import { Fragment, useEffect, useState } from 'react';
import { api } from '../api';
import type { AskContext, InteractionView } from '../types';

/** Who asks, in a few words: the run itself, a subagent by name, or the external agent. */
export function askerWords(asker: AskContext['asker']): string {
  return asker.kind === 'run' ? 'the run' : asker.kind === 'subagent' ? `subagent ${asker.name}` : asker.name;
}

/**
 * What an ask belongs to, at a glance: the task's first line, then its folder, who asks and the
 * permission mode. The risk has its own badge beside the title, so it is not repeated here.
 */
export function AskContextLine(props: { context: AskContext; extra?: string; task?: boolean }) {
  const { context, extra, task = true } = props;
  const facts = [context.folder, `asked by ${askerWords(context.asker)}`, `mode ${context.mode}`, extra ?? ''].filter(Boolean);
  return (
    <div className="ask-context" data-testid="ask-context">
      {task && context.task ? <p className="ask-task">{context.task}</p> : null}
      {/* Each fact wraps as a whole: "mode" is never left at a line's end without its value. */}
      <p className="meta">
        {facts.map((fact, i) => (
          <Fragment key={fact}>
            {i > 0 ? ' · ' : null}
            <span className="fact">{fact}</span>
          </Fragment>
        ))}
      </p>
    </div>
  );
}

/** The context of one ask, read from the server (the event stream carries the request alone). */
export function useAskContext(interactionId: string): AskContext | undefined {
  const [context, setContext] = useState<AskContext>();
  useEffect(() => {
    let live = true;
    api<InteractionView>('GET', `/interactions/${encodeURIComponent(interactionId)}`)
      .then((v) => live && setContext(v.context))
      // The card works without it: the request itself says what will run.
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [interactionId]);
  return context;
}
