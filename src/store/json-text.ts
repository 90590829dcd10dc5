/**
 * A JSON value its writer already encoded (JSON.stringify's text), stored as it is: a RunWrite's
 * checkpoint state and log entries may be given this way. The durable recorder encodes a step's
 * parts when it takes them from the live loop state, which the loop goes on changing: the text is
 * the snapshot, instead of a structured clone that the write then encodes (two passes over the same
 * objects, per step). Readers always get plain JSON values back.
 */
export class JsonText {
  constructor(readonly json: string) {}
}

/** The text to store for a JSON value (JsonText as it is). */
export function jsonOf(value: unknown): string {
  return value instanceof JsonText ? value.json : JSON.stringify(value);
}
