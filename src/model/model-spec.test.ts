import { describe, expect, it } from 'vitest';
import { parseModelSpec } from './model-spec.js';

describe('parseModelSpec', () => {
  it.each([
    ['anthropic:claude-sonnet-4-5', 'anthropic', 'claude-sonnet-4-5'],
    ['openai:gpt-4o', 'openai', 'gpt-4o'],
    ['openai-compatible:llama3.1:8b', 'openai-compatible', 'llama3.1:8b'],
    ['scripted:/abs/demo.json', 'scripted', '/abs/demo.json'],
    ['scripted:relative dir/my script.json', 'scripted', 'relative dir/my script.json'],
    ['scripted:/tmp/é-ü/скрипт.json', 'scripted', '/tmp/é-ü/скрипт.json'],
  ])('accepts the canonical spelling %j', (spec, provider, name) => {
    expect(parseModelSpec(spec)).toEqual({ provider, name, spec });
  });

  // Every respelling of "scripted:" that a startsWith check would miss, or a trim would turn into it.
  it.each([
    [' scripted:/etc/passwd', /whitespace/],
    ['scripted:/etc/passwd ', /whitespace/],
    ['\tscripted:/etc/passwd', /control or invisible/],
    ['\nscripted:/etc/passwd', /control or invisible/],
    ['\u00a0scripted:/etc/passwd', /whitespace/],
    ['\u3000scripted:/etc/passwd', /whitespace/],
    ['\ufeffscripted:/etc/passwd', /control or invisible/],
    ['\u200bscripted:/etc/passwd', /control or invisible/],
    ['\u202escripted:/etc/passwd', /control or invisible/],
    ['scripted\u0000:/etc/passwd', /control or invisible/],
    ['scripted:/etc/passwd\u0000.json', /control or invisible/],
    ['scripted:\u0085/etc/passwd', /control or invisible/],
    ['scripted:/etc/\u007fpasswd', /control or invisible/],
    ['scripted:\u2028/etc/passwd', /control or invisible/],
    ['scripted:\ud800/etc/passwd', /lone surrogate/],
    ['scripted: /etc/passwd', /starts with whitespace/],
    ['scripted :/etc/passwd', /unknown provider.*lower case/],
    ['Scripted:/etc/passwd', /unknown provider.*lower case/],
    ['SCRIPTED:/etc/passwd', /unknown provider.*lower case/],
    ['ſcripted:/etc/passwd', /unknown provider/],
    ['scripted：/etc/passwd', /unknown provider/],
    ['scripted%3A/etc/passwd', /unknown provider/],
    ['scripted%3a%2Fetc%2Fpasswd', /unknown provider/],
    ['file:/etc/passwd', /unknown provider/],
    ['file:///etc/passwd', /unknown provider/],
    ['scripted', /model name is missing/],
    ['scripted:', /model name is missing/],
    ['scripted:   ', /whitespace/],
    [':scripted:/etc/passwd', /unknown provider ""/],
    ['', /empty/],
    ['x'.repeat(1_001), /at most 1000/],
  ])('refuses %j', (spec, why) => {
    expect(() => parseModelSpec(spec)).toThrowError(expect.objectContaining({ code: 'model_spec_invalid', message: expect.stringMatching(why) }));
  });

  it('never echoes a control character or a long spec in its message', () => {
    const messageOf = (spec: string) => {
      try {
        parseModelSpec(spec);
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(messageOf('scripted:\u001b[2J/etc/passwd')).toContain('\\u{1b}');
    expect(messageOf('scripted:\u001b[2J/etc/passwd')).not.toContain('\u001b');
    expect(messageOf(`nosuch:${'a'.repeat(900)}`).length).toBeLessThan(600);
  });
});
