/**
 * The run or request an id given on the command line names: the id itself, or — as git takes a
 * commit — a start of one that is long enough and names exactly one.
 */
import { InteractionNotFoundError } from '../interaction/index.js';
import { RunNotFoundError, type Store } from '../store/index.js';
import { UsageError } from './usage-error.js';

/** The shortest start of an id taken for the whole: shorter ones would too often name several. */
export const MIN_ID_PREFIX = 8;
/** How many of the ids an ambiguous start names are listed in the error. */
const LISTED = 5;

export type IdKind = 'run' | 'interaction';

export async function resolveId(store: Store, kind: IdKind, given: string): Promise<string> {
  const exact = kind === 'run' ? await store.getRun(given) : await store.getInteraction(given);
  if (exact) return given;
  const notFound = () => (kind === 'run' ? new RunNotFoundError(given) : new InteractionNotFoundError(given));
  if (given.length < MIN_ID_PREFIX) throw notFound();
  const ids = kind === 'run' ? await store.findRunIds(given, LISTED + 1) : await store.findInteractionIds(given, LISTED + 1);
  if (ids.length === 0) throw notFound();
  if (ids.length === 1) return ids[0]!;
  const what = kind === 'run' ? 'run' : 'request';
  const listed = ids.slice(0, LISTED).join(', ');
  throw new UsageError(`"${given}" starts more than one ${what} id (${listed}${ids.length > LISTED ? ', …' : ''}): give more of the id.`);
}
