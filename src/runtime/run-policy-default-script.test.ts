import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NOT_ALLOWED_SCRIPT, RunPolicy } from './run-policy.js';

const script = (text: string) => JSON.stringify({ turns: [{ text }] });

/** The operator's `--model scripted:<file>` and a client-visible sibling, with client scripted models off. */
function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'sage-default-script-'));
  mkdirSync(join(dir, 'ops'));
  writeFileSync(join(dir, 'ops', 'default.json'), script('default'));
  writeFileSync(join(dir, 'ops', 'secret.json'), script('secret'));
  return { dir, policy: new RunPolicy({ roots: [dir], defaultModel: `scripted:${join(dir, 'ops', 'default.json')}` }) };
}

describe("the operator's default scripted model", () => {
  it('is read for runs that name no model though client scripted models are off', () => {
    const { policy } = setup();
    expect(policy.model(policy.modelSpec(undefined)).id).toContain('default.json');
  });

  it('lets a client name that one file only: its neighbours, relative names and traversal stay refused', () => {
    const { dir, policy } = setup();
    for (const spec of [`scripted:${join(dir, 'ops', 'secret.json')}`, 'scripted:default.json', `scripted:${join(dir, 'ops', '..', 'ops', 'secret.json')}`]) {
      expect(() => policy.model(spec), spec).toThrow(/disabled/);
    }
    // A symlink to the default file is that file; a symlink named like it to another file is not.
    symlinkSync(join(dir, 'ops', 'secret.json'), join(dir, 'default.json'));
    expect(() => policy.model(`scripted:${join(dir, 'default.json')}`)).toThrow(/disabled/);
  });

  it('does not widen client scripted folders: a file outside them is refused as before', () => {
    const { dir } = setup();
    mkdirSync(join(dir, 'client'));
    const policy = new RunPolicy({ roots: [dir], scriptedDirs: [join(dir, 'client')], defaultModel: `scripted:${join(dir, 'ops', 'default.json')}` });
    expect(() => policy.model(`scripted:${join(dir, 'ops', 'secret.json')}`)).toThrow(NOT_ALLOWED_SCRIPT);
    expect(policy.model(`scripted:${join(dir, 'ops', 'default.json')}`).id).toContain('default.json');
  });
});
