import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { chooseLogFormat, humanLogLine, humanLogStream } from './log-lines.js';

describe("sage serve's log lines for a person", () => {
  it('turns a pino line into time, level, message and the fields that matter', () => {
    const line = JSON.stringify({ level: 30, time: Date.UTC(2026, 0, 2, 3, 4, 5), pid: 1, hostname: 'h', name: 'sage-server', msg: 'sage server listening', url: 'http://127.0.0.1:7878', auth: false });
    expect(humanLogLine(line, { utc: true })).toBe('03:04:05 INFO  sage server listening url=http://127.0.0.1:7878 auth=false\n');
  });

  it('shows an error by its message (the stack stays in the JSON format), and quotes values with spaces', () => {
    const line = JSON.stringify({ level: 50, time: Date.UTC(2026, 0, 2, 3, 4, 5), msg: 'request failed', path: '/runs', signal: 'a b', err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at x' } });
    expect(humanLogLine(line, { utc: true })).toBe('03:04:05 ERROR request failed path=/runs signal="a b" error="Error: boom"\n');
  });

  it('passes a line that is not a log record through unchanged', () => {
    expect(humanLogLine('not json\n', { utc: true })).toBe('not json\n');
  });

  it('is what a pino logger writes through humanLogStream', () => {
    let written = '';
    const sink = new Writable({
      write(chunk, _encoding, done) {
        written += String(chunk);
        done();
      },
    });
    const logger = pino({ name: 'sage-server' }, humanLogStream(sink));
    logger.info({ signal: 'SIGINT' }, 'shutting down');
    expect(written).toMatch(/^\d\d:\d\d:\d\d INFO {2}shutting down signal=SIGINT\n$/);
  });

  it('is human on a terminal, JSON otherwise, and what --log-format says when given', () => {
    expect(chooseLogFormat(undefined, true)).toBe('pretty');
    expect(chooseLogFormat(undefined, false)).toBe('json');
    expect(chooseLogFormat('json', true)).toBe('json');
    expect(chooseLogFormat('pretty', false)).toBe('pretty');
  });
});
