import { describe, expect, test } from 'vitest';
import { serveChildFlags } from './serve-process.js';

describe('which node flags sage serve starts its server with', () => {
  test('the default young generation, or the one asked for; none for 0, --help, other commands', () => {
    expect(serveChildFlags(['serve', '--port', '0'], {}, [], 8)).toEqual(['--max-semi-space-size=8']);
    expect(serveChildFlags(['serve', '--young-generation', '4'], {}, [], 8)).toEqual(['--max-semi-space-size=4']);
    expect(serveChildFlags(['serve', '--young-generation=32', '--port', '1'], {}, [], 8)).toEqual(['--max-semi-space-size=32']);
    expect(serveChildFlags(['serve', '--young-generation', '0'], {}, [], 8)).toBeUndefined();
    expect(serveChildFlags(['serve', '--help'], {}, [], 8)).toBeUndefined();
    expect(serveChildFlags(['run', 'serve'], {}, [], 8)).toBeUndefined();
  });

  test('a bad value is left to the serve command to refuse (no child), as are node flags of the user', () => {
    expect(serveChildFlags(['serve', '--young-generation', 'big'], {}, [], 8)).toBeUndefined();
    expect(serveChildFlags(['serve', '--young-generation', '65'], {}, [], 8)).toBeUndefined();
    expect(serveChildFlags(['serve'], {}, ['--inspect'], 8)).toBeUndefined();
    expect(serveChildFlags(['serve'], { NODE_OPTIONS: '--max-semi-space-size=2' }, [], 8)).toBeUndefined();
    // The child itself (its environment says who started it) runs the server.
    expect(serveChildFlags(['serve'], { SAGE_SERVE_PARENT: '123' }, [], 8)).toBeUndefined();
  });
});
