/**
 * Equivalent flag spellings, so a deny of `rm -rf *` also stops `rm -fr`, `rm -r -f` and
 * `rm --recursive --force`. Only deny and ask rules use this; allow rules match the text as written.
 */
const ALIASES: Record<string, Record<string, string>> = {
  rm: { '-R': '-r', '--recursive': '-r', '--force': '-f', '--dir': '-d', '--verbose': '-v', '--interactive': '-i' },
  rmdir: { '--parents': '-p' },
  cp: { '-R': '-r', '--recursive': '-r', '--force': '-f', '--archive': '-a' },
  mv: { '--force': '-f' },
  chmod: { '--recursive': '-R' },
  chown: { '--recursive': '-R' },
  git: { '--force': '-f', '--delete': '-d', '--all': '-a', '--quiet': '-q' },
  curl: { '--output': '-o', '--request': '-X', '--data': '-d', '--upload-file': '-T', '--insecure': '-k' },
  wget: { '--output-document': '-O' },
  sed: { '--in-place': '-i', '--quiet': '-n', '--silent': '-n' },
  grep: { '--recursive': '-r', '-R': '-r' },
  ln: { '--symbolic': '-s', '--force': '-f' },
  npm: { '--global': '-g', '--force': '-f' },
  docker: { '--force': '-f' },
  kill: { '-KILL': '-9', '-SIGKILL': '-9', '-s': '-s' },
  tar: { '--extract': '-x', '--create': '-c', '--file': '-f' },
};

// Git's own options before the subcommand do not change which subcommand runs.
const GIT_GLOBAL_WITH_VALUE = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--exec-path', '--config-env']);

export interface FlagView {
  flags: Set<string>;
  positionals: string[];
}

/** Splits words (after the program name) into a canonical flag set and the positional words. */
export function flagView(program: string, words: readonly string[]): FlagView {
  const aliases = ALIASES[program] ?? {};
  const flags = new Set<string>();
  const positionals: string[] = [];
  let i = 0;
  if (program === 'git') {
    while (i < words.length && words[i]!.startsWith('-')) {
      const w = words[i]!;
      i += GIT_GLOBAL_WITH_VALUE.has(w) ? 2 : 1;
    }
  }
  let ended = false;
  for (; i < words.length; i++) {
    const w = words[i]!;
    if (ended || !w.startsWith('-') || w === '-') {
      positionals.push(w);
      continue;
    }
    if (w === '--') {
      ended = true;
      continue;
    }
    if (w.startsWith('--')) {
      const eq = w.indexOf('=');
      const name = eq >= 0 ? w.slice(0, eq) : w;
      const mapped = aliases[name] ?? name;
      flags.add(eq >= 0 ? `${mapped}${w.slice(eq)}` : mapped);
      continue;
    }
    if (/^-[A-Za-z]+$/.test(w)) {
      for (const c of w.slice(1)) flags.add(aliases[`-${c}`] ?? `-${c}`);
      continue;
    }
    flags.add(aliases[w] ?? w);
  }
  return { flags, positionals };
}
