import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { PayloadTooLargeError } from './errors.js';

/**
 * Refuses a request body over `maxBytes` (413) before a route reads it. A body with a
 * Content-Length (what every client sends for JSON) is judged by that header alone: hono's
 * `bodyLimit` reads `c.req.raw.body`, which makes @hono/node-server build the whole web Request —
 * a ReadableStream over the socket — for every request, and the route's `c.req.text()` then reads
 * through it instead of straight from the socket, a cost on every answer.
 * A chunked body (no length) is counted as it arrives, by hono's `bodyLimit`.
 */
export function limitBody(maxBytes: number): MiddlewareHandler {
  const counted = bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw new PayloadTooLargeError(maxBytes);
    },
  });
  return async (c, next) => {
    const method = c.req.method;
    // @hono/node-server gives these no body.
    if (method === 'GET' || method === 'HEAD') return next();
    const length = c.req.header('content-length');
    if (length === undefined || c.req.header('transfer-encoding') !== undefined) return counted(c, next);
    // Node's HTTP parser has already refused a malformed Content-Length (400).
    if (Number(length) > maxBytes) throw new PayloadTooLargeError(maxBytes);
    return next();
  };
}
