import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadProjectInstructions } from './project-instructions.js';
import { buildSystemPrompt } from './system-prompt.js';

describe('loadProjectInstructions', () => {
  it('reads AGENTS.md then SAGE.md at the project root, skipping missing or empty ones', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sage-instructions-'));
    await writeFile(join(dir, 'AGENTS.md'), 'Run `npm test` before committing.\n');
    await writeFile(join(dir, 'SAGE.md'), '   \n');
    expect(await loadProjectInstructions(dir)).toEqual([{ file: 'AGENTS.md', content: 'Run `npm test` before committing.' }]);
  });

  it('returns nothing for a project without instructions', async () => {
    expect(await loadProjectInstructions(await mkdtemp(join(tmpdir(), 'sage-empty-')))).toEqual([]);
  });

  it('raises read errors other than a missing file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sage-dir-'));
    await mkdir(join(dir, 'AGENTS.md'));
    await expect(loadProjectInstructions(dir)).rejects.toMatchObject({ code: 'EISDIR' });
  });

  it('cuts very long instructions with a note naming the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sage-long-'));
    await writeFile(join(dir, 'SAGE.md'), 'rule\n'.repeat(1000));
    const [loaded] = await loadProjectInstructions(dir, { maxChars: 500 });
    expect(loaded!.content.length).toBeLessThanOrEqual(500);
    expect(loaded!.content).toMatch(/Read SAGE\.md for the rest/);
  });
});

describe('buildSystemPrompt', () => {
  it('states the environment, lists tools and skills, and includes project instructions', () => {
    const prompt = buildSystemPrompt({
      cwd: '/work/app',
      platform: 'linux',
      date: new Date('2026-03-04T10:00:00Z'),
      tools: [
        { name: 'Read', description: 'Reads a file.\nMore detail the model gets in the schema.' },
        { name: 'Bash', description: 'Runs a shell command.' },
      ],
      skills: [
        { name: 'release', description: 'Cut a release.' },
        { name: 'review', description: 'Review a change.', instructions: 'Check tests first.' },
      ],
      projectInstructions: [{ file: 'AGENTS.md', content: 'Use pnpm.' }],
    });
    expect(prompt).toContain('Working directory (the project root): /work/app');
    expect(prompt).toContain('Platform: linux');
    expect(prompt).toContain("Today's date: 2026-03-04");
    expect(prompt).toContain('- Read: Reads a file.');
    expect(prompt).not.toContain('More detail');
    expect(prompt).toContain('- release: Cut a release.');
    expect(prompt).toContain('## review (active)\nReview a change.\n\nCheck tests first.');
    expect(prompt).toMatch(/# Project instructions \(AGENTS\.md\)[\s\S]*Use pnpm\./);
  });

  it('omits empty sections', () => {
    const prompt = buildSystemPrompt({ cwd: '/', platform: 'darwin', date: new Date(0), tools: [] });
    expect(prompt).not.toContain('# Tools');
    expect(prompt).not.toContain('# Skills');
    expect(prompt).not.toContain('# Project instructions');
  });
});
