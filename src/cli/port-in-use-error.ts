import { SageError } from '../errors/index.js';

/** `sage serve` could not listen: another program holds the address (exit 1, one line). */
export class PortInUseError extends SageError {
  constructor(host: string, port: number, options?: { cause?: unknown }) {
    const message = `Port ${port} on ${host} is taken (another sage serve, or another program): stop that one, `
      + 'or pass --port N (--port 0 picks a free one).';
    super('port_in_use', message, options);
  }
}
