import { describe, expect, it } from 'vitest';
import { base64Bytes, checkToolImages } from './tool-image.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==';

describe('checkToolImages', () => {
  it('keeps images a provider takes, and names each one it leaves out with the reason', () => {
    const checked = checkToolImages('a chart', [
      { mediaType: 'image/png', data: PNG },
      { mediaType: 'image/svg+xml', data: 'PHN2Zy8+' },
      { mediaType: 'image/jpeg', data: `data:image/jpeg;base64,${PNG}` },
      { mediaType: 'image/gif', data: 'abc' },
      'not an image',
    ]);
    expect(checked.images).toEqual([{ mediaType: 'image/png', data: PNG }]);
    expect(checked.content.split('\n')).toEqual([
      'a chart',
      '[image 2 of the result was not shown: mediaType image/svg+xml is not an image type models take (image/png, image/jpeg, image/gif, image/webp)]',
      '[image 3 of the result was not shown: data is not plain base64 (no data: prefix, no line breaks)]',
      '[image 4 of the result was not shown: data is not plain base64 (no data: prefix, no line breaks)]',
      expect.stringMatching(/^\[image 5 of the result was not shown: image .+\]$/),
    ]);
  });

  it('leaves the text as it is when every image is fine', () => {
    expect(checkToolImages('x', [{ mediaType: 'image/webp', data: PNG }]).content).toBe('x');
  });

  it('counts decoded bytes', () => {
    expect(base64Bytes(PNG)).toBe(70);
    expect(base64Bytes(Buffer.from('ab').toString('base64'))).toBe(2);
  });
});
