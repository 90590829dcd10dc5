import path from 'node:path';

/** Extensions whose content is never text a model can use; refused before reading a byte. */
const BINARY_EXTENSIONS = new Set([
  'png', 'jpg', 'jpeg', 'gif', 'bmp', 'ico', 'webp', 'tif', 'tiff', 'psd', 'heic', 'avif',
  'pdf', 'zip', 'gz', 'tgz', 'bz2', 'xz', 'zst', '7z', 'rar', 'tar', 'jar', 'war', 'class',
  'exe', 'dll', 'so', 'dylib', 'o', 'a', 'lib', 'obj', 'bin', 'iso', 'dmg', 'wasm', 'pyc', 'pyo', 'node',
  'mp3', 'mp4', 'm4a', 'wav', 'flac', 'ogg', 'avi', 'mov', 'mkv', 'webm',
  'woff', 'woff2', 'ttf', 'otf', 'eot', 'sqlite', 'sqlite3', 'db',
]);

/** How much of a file is sniffed for NUL bytes, as git and ripgrep do. */
export const BINARY_SNIFF_BYTES = 8 * 1024;

export function hasBinaryExtension(filePath: string): boolean {
  return BINARY_EXTENSIONS.has(path.extname(filePath).slice(1).toLowerCase());
}

/** Text files do not contain NUL bytes; nearly every binary format does, early on. */
export function looksBinary(head: Uint8Array): boolean {
  return head.subarray(0, BINARY_SNIFF_BYTES).includes(0);
}
