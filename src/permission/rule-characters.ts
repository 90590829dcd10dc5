/**
 * Characters a permission rule may not contain, because a rule holding one can never match what a
 * person reads in it: `Bash(cat\u200b *)` looks like a deny of `cat`, but no command spells `cat`
 * with a zero-width space, so `cat secret.txt` runs. Every rule source (settings files, flags, the
 * HTTP API, the per-user store) goes through `parseRule`, which refuses them with the code point.
 */

/** Names of the format characters people meet most; the others are named by code point only. */
const NAMES: Record<number, string> = {
  0x00ad: 'SOFT HYPHEN',
  0x061c: 'ARABIC LETTER MARK',
  0x180e: 'MONGOLIAN VOWEL SEPARATOR',
  0x200b: 'ZERO WIDTH SPACE',
  0x200c: 'ZERO WIDTH NON-JOINER',
  0x200d: 'ZERO WIDTH JOINER',
  0x200e: 'LEFT-TO-RIGHT MARK',
  0x200f: 'RIGHT-TO-LEFT MARK',
  0x202a: 'LEFT-TO-RIGHT EMBEDDING',
  0x202b: 'RIGHT-TO-LEFT EMBEDDING',
  0x202c: 'POP DIRECTIONAL FORMATTING',
  0x202d: 'LEFT-TO-RIGHT OVERRIDE',
  0x202e: 'RIGHT-TO-LEFT OVERRIDE',
  0x2060: 'WORD JOINER',
  0x2066: 'LEFT-TO-RIGHT ISOLATE',
  0x2067: 'RIGHT-TO-LEFT ISOLATE',
  0x2068: 'FIRST STRONG ISOLATE',
  0x2069: 'POP DIRECTIONAL ISOLATE',
  0xfeff: 'ZERO WIDTH NO-BREAK SPACE (BOM)',
  0x00a0: 'NO-BREAK SPACE',
  0x3000: 'IDEOGRAPHIC SPACE',
};

// Unicode category Cf (zero-width, bidi controls, BOM, soft hyphen…), controls other than tab, the
// line and paragraph separators, the characters Unicode says to draw as nothing whatever their
// category (the combining grapheme joiner, variation selectors, Hangul fillers, Mongolian free
// variation selectors), and the blank braille pattern: none is visible where a rule is read.
const INVISIBLE = /[\p{Cf}\p{Cc}\p{Default_Ignorable_Code_Point}\u2028\u2029\u2800]/u;
// A space that is not U+0020: the shell does not split words on it, so `cat\u00a0*` names no `cat`.
const ODD_SPACE = /\s|\p{Zs}/u;
const LATIN = /\p{Script=Latin}/u;
const LOOK_ALIKE_SCRIPTS: ReadonlyArray<[string, RegExp]> = [
  ['Cyrillic', /\p{Script=Cyrillic}/u], ['Greek', /\p{Script=Greek}/u], ['Armenian', /\p{Script=Armenian}/u], ['Cherokee', /\p{Script=Cherokee}/u], ['Coptic', /\p{Script=Coptic}/u],
];

/** `U+200B ZERO WIDTH SPACE`, `U+0430`. */
export function codePointName(ch: string): string {
  const cp = ch.codePointAt(0)!;
  const hex = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
  return NAMES[cp] ? `${hex} ${NAMES[cp]}` : hex;
}

/** The rule with every invisible or odd character written as `\u{…}`, so an error message shows it. */
export function visibleRule(rule: string): string {
  return rule.replace(/[\p{Cf}\p{Cc}\p{Zs}\p{Default_Ignorable_Code_Point}\u2028\u2029\u2800]/gu, (ch) => (ch === ' ' || ch === '\t' ? ch : `\\u{${ch.codePointAt(0)!.toString(16)}}`));
}

/**
 * Why `rule` can never match what it appears to say, or undefined: an invisible or format
 * character, a space other than U+0020, a character Unicode itself folds to plain ASCII (fullwidth
 * `（`, `ｃａｔ`, mathematical `𝐜𝐚𝐭`), or a word mixing Latin letters with Cyrillic or Greek ones
 * (`cаt` with a Cyrillic `а`). Whole words in another script (`Read(отчёт.txt)`) are file names
 * people have, and stay allowed.
 */
export function unmatchableCharacter(rule: string): string | undefined {
  let index = 0;
  for (const ch of rule) {
    const at = `at character ${index + 1}`;
    index += 1;
    if (ch === '\t') continue;
    if (INVISIBLE.test(ch)) return `it contains ${codePointName(ch)}, an invisible character, ${at}; no command or path a person reads has it, so the rule would never match. Type the rule again without it`;
    if (ch !== ' ' && ODD_SPACE.test(ch)) return `it contains ${codePointName(ch)}, which looks like a space but is not one, ${at}; the rule would never match. Use a plain space`;
    if (ch.charCodeAt(0) > 0x7f) {
      const folded = ch.normalize('NFKC');
      if (folded !== ch && /^[\x20-\x7e]+$/.test(folded)) return `it contains ${codePointName(ch)}, a look-alike of "${folded}", ${at}; the rule would never match. Write "${folded}"`;
    }
  }
  for (const word of rule.split(/[^\p{L}\p{M}]+/u)) {
    if (!LATIN.test(word)) continue;
    for (const [script, pattern] of LOOK_ALIKE_SCRIPTS) {
      const odd = [...word].find((c) => pattern.test(c));
      if (odd) return `the word "${word}" mixes Latin and ${script} letters (${codePointName(odd)} is ${script}), a look-alike spelling that would never match. Type it again in one script`;
    }
  }
  return undefined;
}
