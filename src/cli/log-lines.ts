import { Writable } from 'node:stream';

export type LogFormat = 'pretty' | 'json';

/** `--log-format`, else human lines on a terminal and JSON for whatever reads them otherwise. */
export function chooseLogFormat(flag: LogFormat | undefined, isTerminal: boolean): LogFormat {
  return flag ?? (isTerminal ? 'pretty' : 'json');
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** What every record carries and a person at the server's own terminal does not need. */
const UNSHOWN = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name', 'v']);

function showValue(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return /[\s"=]/.test(text) || text === '' ? JSON.stringify(text) : text;
}

/**
 * One pino JSON line as `HH:MM:SS LEVEL message key=value…`. An error shows as its type and
 * message; its stack is in the JSON format (`--log-format json`). A line that is not a log record
 * is passed through as it is.
 */
export function humanLogLine(line: string, options: { utc?: boolean } = {}): string {
  let record: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(line);
    if (typeof parsed !== 'object' || parsed === null || typeof (parsed as { level?: unknown }).level !== 'number') return line.endsWith('\n') ? line : `${line}\n`;
    record = parsed as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const date = new Date(typeof record.time === 'number' ? record.time : Date.now());
  const two = (n: number) => String(n).padStart(2, '0');
  const time = options.utc ? `${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())}` : `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
  const level = (LEVELS[record.level as number] ?? String(record.level)).padEnd(5);
  const fields: string[] = [];
  for (const [key, value] of Object.entries(record)) {
    if (UNSHOWN.has(key) || value === undefined) continue;
    if (key === 'err' && typeof value === 'object' && value !== null) {
      const err = value as { type?: unknown; message?: unknown };
      fields.push(`error=${showValue(`${typeof err.type === 'string' ? `${err.type}: ` : ''}${String(err.message ?? '')}`)}`);
      continue;
    }
    fields.push(`${key}=${showValue(value)}`);
  }
  const msg = typeof record.msg === 'string' ? record.msg : '';
  return `${time} ${level} ${msg}${fields.length ? ` ${fields.join(' ')}` : ''}\n`;
}

/**
 * A stream for pino that writes each record to `out` as a human line. Not pino-pretty: it is not a
 * dependency, and would bring about a dozen packages (colorette, dateformat, help-me, joycon,
 * sonic-boom…) and, as a pino transport, a worker thread, to a server that logs a few lines at
 * start and stop and one per failed request.
 */
export function humanLogStream(out: NodeJS.WritableStream): Writable {
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line !== '') out.write(humanLogLine(line));
      done();
    },
  });
}
