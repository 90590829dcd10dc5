import { z } from 'zod';
import type { ToolImage } from './types.js';

/**
 * The image types every provider Sage speaks takes (Anthropic: PNG, JPEG, GIF, WebP; OpenAI the
 * same). One of another type in a request makes the provider refuse the whole call, so a tool's
 * image of another type is never sent.
 */
export const MODEL_IMAGE_MEDIA_TYPES: readonly string[] = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

/** Plain base64 (no `data:` prefix, no line breaks), as the provider APIs take it; a character class, no backtracking on megabytes. */
const BASE64_CHARS = /^[A-Za-z0-9+/]+={0,2}$/;
const isBase64 = (data: string): boolean => data.length % 4 === 0 && BASE64_CHARS.test(data);

export const toolImageSchema = z.object({
  mediaType: z.string().refine((t) => MODEL_IMAGE_MEDIA_TYPES.includes(t), { error: (issue) => `${String(issue.input)} is not an image type models take (${MODEL_IMAGE_MEDIA_TYPES.join(', ')})` }),
  data: z.string().min(1, 'is empty').refine(isBase64, 'is not plain base64 (no data: prefix, no line breaks)'),
});

/** Bytes of base64 data once decoded. */
export function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/**
 * A tool's images checked before they go into the conversation: one the providers would refuse
 * (another type, not base64) is left out and the text says why, so one bad image from a tool
 * cannot make every later model call of the run fail.
 */
export function checkToolImages(content: string, images: readonly unknown[]): { content: string; images: ToolImage[] } {
  const kept: ToolImage[] = [];
  const notes: string[] = [];
  images.forEach((image, i) => {
    const parsed = toolImageSchema.safeParse(image);
    if (parsed.success) kept.push(parsed.data);
    else notes.push(`[image ${i + 1} of the result was not shown: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || 'image'} ${issue.message}`).join('; ')}]`);
  });
  return { content: notes.length ? [content, ...notes].join('\n') : content, images: kept };
}
