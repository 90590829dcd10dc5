import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The API paths the dev server forwards to `sage serve` (the built UI is served by it directly).
const API = ['/runs', '/interactions', '/permissions', '/audit', '/me', '/healthz', '/openapi.json'];
const target = process.env.SAGE_API_URL ?? 'http://127.0.0.1:7878';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  // Vite's built-in esbuild JSX transform: no React plugin needed (no fast refresh in dev, which is fine).
  esbuild: { jsx: 'automatic', jsxImportSource: 'react' },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true, target: 'es2022' },
  // A no-auth `sage serve` answers only requests addressed to its own loopback origin (Host and
  // Origin checks against DNS rebinding), so the proxy presents the API's origin, not the dev server's.
  server: { proxy: Object.fromEntries(API.map((p) => [p, { target, changeOrigin: true, headers: { origin: new URL(target).origin } }])) },
});
