import { RequestError } from '@agentclientprotocol/sdk';

/**
 * How Sage answers an `fs/read_text_file` it cannot serve, per agent. ACP's own answers are errors
 * (resource-not-found, -32002, for a missing file), but two agents cannot read a JSON-RPC error:
 * their SDKs reject with the plain error object, which they turn into the text "[object Object]".
 *
 * - Gemini CLI (0.61.0) looks for "not found"/"ENOENT" in that text before its write_file or edit
 *   treats a file as new, so every error fails the write of a new file ("Error checking existing
 *   file"). It handles a successful read: an empty file, which write_file then writes over (it
 *   reports an overwrite of an empty file; the file it writes is the same).
 * - Qwen Code (0.15.10) reads the -32002 code as ENOENT, but shows its model "[object Object]" for
 *   any other error, so a refusal's reason reaches it only as the text of a successful read.
 */
export interface ReadAnswers {
  /** The file does not exist: the answer to send, or the error to throw. */
  missing(path: string): { content: string };
  /** Sage refused the read for `reason` (a rule, a person, a folder): the answer, or the error to throw. */
  refused(reason: string): { content: string };
}

/** A refusal as JSON-RPC's "invalid params" with Sage's reason as the message (a plain Error would arrive as "Internal error"). */
export function refusal(reason: string): RequestError {
  return new RequestError(-32602, reason);
}

const standard: ReadAnswers = {
  missing(path) {
    throw RequestError.resourceNotFound(path);
  },
  refused(reason) {
    throw refusal(reason);
  },
};

const gemini: ReadAnswers = {
  ...standard,
  missing: () => ({ content: '' }),
};

const qwen: ReadAnswers = {
  ...standard,
  // Said as Sage's, in place of the file: the model must not take it for the file's content.
  refused: (reason) => ({ content: `[Sage refused this read; this text is not the file's content.] ${reason}` }),
};

/** The answers for the agent of this preset (`gemini`, `qwen`; any other ACP agent gets ACP's own). */
export function readAnswersFor(preset: string): ReadAnswers {
  if (preset === 'gemini') return gemini;
  if (preset === 'qwen') return qwen;
  return standard;
}
