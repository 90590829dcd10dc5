/**
 * `sage … | head -1`: when the reader goes away, the next write fails with EPIPE. That is the
 * reader's choice, not an error: end quietly (no stack), with the exit code set so far. Installed
 * once per process, for stdout and stderr.
 */
let installed = false;

export function endQuietlyOnClosedPipe(): void {
  if (installed) return;
  installed = true;
  const code = () => (typeof process.exitCode === 'number' ? process.exitCode : 0);
  for (const [stream, other] of [[process.stdout, process.stderr], [process.stderr, process.stdout]] as const) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') process.exit(code());
      // Any other failure to write is still one line (on the other stream, if it works), never a stack.
      other.write(`error: cannot write to ${stream === process.stdout ? 'stdout' : 'stderr'}: ${error.message}\n`, () => process.exit(1));
    });
  }
}
