/** What both Grep backends are asked: the validated input, resolved to absolute paths. */
export interface GrepQuery {
  pattern: string;
  /** Absolute file or directory to search. */
  root: string;
  rootIsFile: boolean;
  glob?: string;
  /** Extensions from the `type` filter. */
  extensions?: readonly string[];
  mode: 'content' | 'files_with_matches' | 'count';
  ignoreCase: boolean;
  multiline: boolean;
  before: number;
  after: number;
  /**
   * In content mode, a backend may stop once it holds more than this many lines (files taken in
   * path order), since the rest would be cut anyway; it keeps memory bounded on huge results.
   */
  stopAfterLines: number;
  signal?: AbortSignal;
}

export interface GrepLine {
  lineNumber: number;
  text: string;
  /** A matching line, or a context line around one. */
  match: boolean;
}

export interface GrepFileHits {
  /** Absolute path. */
  path: string;
  /** Matching lines (matches, in multiline mode) — for count mode. */
  count: number;
  /** Content mode only: matching and context lines in order. */
  lines: GrepLine[];
}

export interface GrepHits {
  files: GrepFileHits[];
  /** The backend stopped early (content mode); more results exist. */
  stoppedEarly: boolean;
}

/** A failure to report to the model, as opposed to an empty result. */
export class GrepQueryError extends Error {}
