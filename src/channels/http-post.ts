import http from 'node:http';
import https from 'node:https';

/** How the platform answered a POST: its status and, for a 429 or 503, how long it asked us to wait. */
export interface PostAnswer {
  status: number;
  retryAfterMs?: number;
}

/**
 * POSTs to one URL over node:http(s) with kept-alive connections. The generic webhook used fetch:
 * with many chats waiting, its posts allocated much per tap (undici's Request, Response, Headers
 * and web streams) and were a large share of the server's CPU (bench/README.md); a plain request is a
 * fraction of both, and the garbage it does not make is what lifts the server's peak RSS.
 */
export class HttpPoster {
  private readonly url: URL;
  private readonly agent: http.Agent;
  private readonly request: typeof http.request;
  private closed = false;

  constructor(
    url: string,
    private readonly timeoutMs = 10_000,
  ) {
    this.url = new URL(url);
    const secure = this.url.protocol === 'https:';
    this.agent = secure ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
    // Once closed, a connection that finishes its request is closed instead of kept for the next.
    const keep = this.agent.keepSocketAlive.bind(this.agent);
    this.agent.keepSocketAlive = (socket) => !this.closed && keep(socket);
    this.request = secure ? https.request : http.request;
  }

  /**
   * One POST; resolves with the answer, rejects on a transport failure (refused, reset, timed out:
   * the caller's retry treats that as a platform that is down). A kept-alive connection the peer
   * closed just as it was reused is retried once at once on a new one, as Node's docs advise: the
   * request never reached the peer.
   */
  async post(body: string, headers: Record<string, string>): Promise<PostAnswer> {
    try {
      return await this.once(body, headers);
    } catch (error) {
      if ((error as { reusedSocket?: boolean }).reusedSocket && (error as NodeJS.ErrnoException).code === 'ECONNRESET') return this.once(body, headers);
      throw error;
    }
  }

  /**
   * Closes the idle connections (the adapter stopped). A post in flight is left to finish: cut, it
   * may have reached the platform already, and the retry would post the message twice.
   */
  close(): void {
    this.closed = true;
    for (const sockets of Object.values(this.agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
  }

  private once(body: string, headers: Record<string, string>): Promise<PostAnswer> {
    return new Promise((resolve, reject) => {
      const req = this.request(this.url, { method: 'POST', agent: this.agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
        // The answer's body is not used, but must be read for the connection to be reused.
        res.resume();
        res.on('error', fail);
        res.on('end', () => {
          clearTimeout(timer);
          const seconds = Number(res.headers['retry-after']);
          resolve({ status: res.statusCode ?? 0, ...(Number.isFinite(seconds) && seconds > 0 ? { retryAfterMs: seconds * 1000 } : {}) });
        });
      });
      const timer = setTimeout(() => req.destroy(new Error(`no answer from ${this.url.origin} in ${this.timeoutMs / 1000} s`)), this.timeoutMs);
      function fail(error: Error) {
        clearTimeout(timer);
        reject(Object.assign(error, { reusedSocket: req.reusedSocket }));
      }
      req.on('error', fail);
      req.end(body);
    });
  }
}
