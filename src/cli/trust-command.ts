/**
 * `sage trust [DIR]`, `sage trust --list`, `sage trust --revoke DIR`: the folder trust a session asks
 * about at a terminal, given, listed and taken back without starting one.
 */
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { isFolderTrusted, listTrustedFolders, trustCommandFor, trustedFoldersFile, trustFolder, untrustFolder } from '../permission/index.js';
import { describeTrustSummary, trustSummary } from './trust-summary.js';
import { TrustFileError } from './trust-file-error.js';
import { UsageError } from './usage-error.js';

const optionsSchema = z.object({
  list: z.boolean().optional(),
  revoke: z.string().min(1, '--revoke needs a folder').optional(),
  json: z.boolean().optional(),
}).strict();

export function registerTrustCommand(program: Command): Command {
  return program.command('trust')
    .description("trust a folder: its own settings' allow rules, hooks, mode and approval settings, its MCP servers, agents and skills then apply (deny and ask rules apply either way)")
    .argument('[dir]', 'the folder to trust (default: the current one)')
    .option('--list', 'list the trusted folders')
    .option('--revoke <dir>', 'take back the trust of a folder')
    .option('--json', 'with --list: print JSON')
    .action((dir: string | undefined, raw: unknown) => {
      const parsed = optionsSchema.safeParse(raw);
      if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => i.message).join('; '));
      const opts = parsed.data;
      const home = process.env.SAGE_HOME || os.homedir();
      const given = [opts.list && '--list', opts.revoke !== undefined && '--revoke', dir !== undefined && 'a folder'].filter(Boolean);
      if (given.length > 1) throw new UsageError(`sage trust takes one of a folder, --list or --revoke DIR (got ${given.join(' and ')})`);
      if (opts.json && !opts.list) throw new UsageError('--json goes with --list');
      if (opts.list) return list(home, opts.json === true);
      if (opts.revoke !== undefined) return revoke(home, opts.revoke);
      return trust(home, dir ?? process.cwd());
    });
}

function trust(home: string, dir: string): void {
  const folder = realFolder(dir);
  const already = isFolderTrusted(home, folder);
  if (!already) trustFolder(home, folder);
  process.stdout.write(`${already ? 'Already trusted' : 'Trusted'}: ${folder}\nNow applied in runs there:\n${describeTrustSummary(trustSummary(folder)).map((l) => `  ${l}\n`).join('')}Take it back with: ${trustCommandFor(folder, { revoke: true })}\n`);
}

function list(home: string, json: boolean): void {
  assertReadable(home);
  const folders = listTrustedFolders(home);
  if (json) {
    process.stdout.write(`${JSON.stringify({ folders })}\n`);
    return;
  }
  process.stdout.write(folders.length ? folders.map((f) => `${f}${existsSync(f) ? '' : '  (missing)'}\n`).join('') : 'No trusted folders. Trust one with: sage trust DIR\n');
}

function revoke(home: string, dir: string): void {
  // A folder that is gone can still be revoked by the path it was trusted under.
  const resolved = path.resolve(dir);
  const shown = existsSync(resolved) ? realpathSync(resolved) : resolved;
  process.stdout.write(untrustFolder(home, dir) ? `No longer trusted: ${shown}\n` : `Was not trusted: ${shown} (nothing changed)\n`);
}

function realFolder(dir: string): string {
  const resolved = path.resolve(dir);
  if (!existsSync(resolved)) throw new UsageError(`no such folder: ${resolved}`);
  const real = realpathSync(resolved);
  if (!statSync(real).isDirectory()) throw new UsageError(`not a folder: ${resolved}`);
  return real;
}

/** A broken trust file trusts nothing; listing it as "no trusted folders" would hide that. */
function assertReadable(home: string): void {
  const file = trustedFoldersFile(home);
  if (!existsSync(file)) return;
  try {
    JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    throw new TrustFileError(`${file} is not valid JSON, so no folder is trusted; fix it or delete it and trust folders again`);
  }
}
