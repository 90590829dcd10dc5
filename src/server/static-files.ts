import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built web UI: `web/dist` at the package root (two levels up from src/server and dist/server). */
export const DEFAULT_WEB_ROOT = fileURLToPath(new URL('../../web/dist', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.map': 'application/json',
  '.woff2': 'font/woff2',
};

/**
 * Serves a file of the built UI, or undefined when there is none. The path is normalised and must
 * stay inside `root`, so `..` can never reach the rest of the disk.
 */
export async function serveWebFile(root: string, urlPath: string): Promise<Response | undefined> {
  let rel: string;
  try {
    rel = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  if (rel === '/' || rel === '') rel = '/index.html';
  const file = normalize(join(root, rel));
  if (file !== root && !file.startsWith(root.endsWith(sep) ? root : root + sep)) return undefined;
  try {
    const info = await stat(file);
    if (!info.isFile()) return undefined;
    const body = await readFile(file);
    // Vite names assets by content hash, so they never change; index.html must always be fresh.
    const cache = rel.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
    return new Response(body, { headers: { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': cache } });
  } catch {
    return undefined;
  }
}
