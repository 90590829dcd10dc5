import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createPermissionEngine } from './engine.js';
import { PermissionRuleError } from './errors.js';
import { parseRule } from './rule.js';
import { loadSettings } from './settings-loader.js';

const refusal = (rule: string): string => {
  try {
    parseRule(rule);
  } catch (error) {
    expect(PermissionRuleError.isInstance(error)).toBe(true);
    return (error as Error).message;
  }
  throw new Error(`the rule ${JSON.stringify(rule)} was accepted`);
};

describe('rules that can never match are refused at parse, naming the code point', () => {
  it.each([
    ['Bash(cat\u200b *)', 'U+200B ZERO WIDTH SPACE'],
    ['Bash(c\u200dat *)', 'U+200D ZERO WIDTH JOINER'],
    ['Read(\u202Etxt.terces)', 'U+202E RIGHT-TO-LEFT OVERRIDE'],
    ['Read(\u2066secret.txt\u2069)', 'U+2066 LEFT-TO-RIGHT ISOLATE'],
    ['\ufeffBash(cat *)', 'U+FEFF ZERO WIDTH NO-BREAK SPACE (BOM)'],
    ['Bash(ca\u00adt *)', 'U+00AD SOFT HYPHEN'],
    ['Bash(cat\u2060 *)', 'U+2060 WORD JOINER'],
    ['Bash(cat *)\u0000', 'U+0000'],
    ['Bash(cat\u00a0*)', 'U+00A0 NO-BREAK SPACE'],
    ['Bash(cat\u3000*)', 'U+3000 IDEOGRAPHIC SPACE'],
    ['Bash\uff08cat *\uff09', 'U+FF08'],
    ['Bash(\uff43\uff41\uff54 *)', 'U+FF43'],
    ['Bash(\u{1d41c}at *)', 'U+1D41C'],
    ['Bash(c\u0430t *)', 'U+0430'],
    ['Read(se\u03bfret.txt)', 'U+03BF'],
    ['Bash(c\u034fat *)', 'U+034F'],
    ['Bash(cat\ufe0f *)', 'U+FE0F'],
    ['Bash(cat\u{e0100} *)', 'U+E0100'],
    ['Bash(cat\u3164*)', 'U+3164'],
    ['Bash(cat\u2800*)', 'U+2800'],
    ['Bash(c\u180bat *)', 'U+180B'],
    ['Bash(ech\u0585 *)', 'U+0585'],
  ])('%j is refused (%s)', (rule, named) => {
    const message = refusal(rule);
    expect(message).toContain(named);
    // The message shows the character it names: the rule as printed is not the rule as it looks.
    expect([...message].filter((c) => /[\p{Cf}\p{Cc}\u00a0\u3000]/u.test(c))).toEqual([]);
  });

  it('keeps rules in one script, accented names and plain spacing', () => {
    for (const rule of ['Read(отчёт.txt)', 'Read(café/**)', 'Edit(docs/資料/**)', 'Bash(npm test *)', 'Bash(echo\t*)', 'Read(Ωμέγα.txt)', 'WebFetch(domain:пример.рф)']) {
      expect(() => parseRule(rule)).not.toThrow();
    }
  });

  it('a user settings file with one is an error naming the file, the rule and the code point; the engine never holds it', () => {
    const home = mkdtempSync(join(tmpdir(), 'sage-rule-chars-'));
    try {
      mkdirSync(join(home, '.sage'));
      const file = join(home, '.sage', 'settings.json');
      writeFileSync(file, JSON.stringify({ permissions: { deny: ['Bash(cat\u200b *)'] } }));
      const settings = loadSettings({ projectRoot: home, home });
      expect(settings.problems).toContainEqual({ file, key: 'permissions.deny[0]', severity: 'error', problem: expect.stringContaining('U+200B ZERO WIDTH SPACE') });
      expect(settings.problems[0]!.problem).toContain('Bash(cat\\u{200b} *)');
      expect(settings.rules).toEqual([]);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('a rule handed to the engine directly (a run\'s own list) is refused too, never compiled', () => {
    const engine = createPermissionEngine({ rules: [{ rule: 'Bash(cat\u200b *)', behavior: 'deny', source: 'request' }], projectRoot: tmpdir(), home: tmpdir() });
    expect(engine.settingsProblems()).toContainEqual(expect.objectContaining({ severity: 'error', problem: expect.stringContaining('U+200B') }));
    expect(() => engine.addRule('Bash(cat\u200b *)', 'deny')).toThrow(/U\+200B/);
  });
});
