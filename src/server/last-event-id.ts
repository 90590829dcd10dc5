import { InvalidInputError } from '../errors/index.js';

/**
 * Where a stream resumes: the `Last-Event-ID` header a reconnecting EventSource sends, or `?after=`
 * for clients that cannot set headers. Both are event seqs; 0 replays everything.
 */
export function resumeSeq(header: string | undefined, query: string | undefined): number {
  const raw = header ?? query;
  if (raw === undefined || raw.trim() === '') return 0;
  if (!/^\d{1,15}$/.test(raw.trim())) {
    throw new InvalidInputError('Last-Event-ID must be the seq of an event (a non-negative integer).', { field: header !== undefined ? 'Last-Event-ID' : 'after' });
  }
  return Number(raw.trim());
}
