import type { PermissionMode } from '../../src/permission/modes.js';
import type { DifferentialCase, ScratchEntry, SettingsJson } from './case-types.js';

/*
 * The differential cases. Each call must be harmless if Claude Code really runs it: paths stay in
 * the scratch tree (%P% project, %H% fake home, %O% a folder outside both), deletions name
 * folders that do not exist, network tools only ever point at 127.0.0.1:9 (nothing listens), and
 * the git repositories have no remote. `%ID%` is the case's own id (a fresh file name per case:
 * Claude Code insists on a Read before it overwrites an existing file).
 */

type Call = [tool: string, input: Record<string, unknown>, note: string];
const ALL_MODES: readonly PermissionMode[] = ['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'];
const P = (rel: string) => `%P%/${rel}`;
const H = (rel: string) => `%H%/${rel}`;
const O = (rel: string) => `%O%/${rel}`;
const bash = (command: string, note: string): Call => ['Bash', { command }, note];
const read = (file_path: string, note: string): Call => ['Read', { file_path }, note];
const write = (file_path: string, note: string): Call => ['Write', { file_path, content: 'written by the differential test\n' }, note];
/** An edit that can run any number of times: the old text stays in the file, once. */
const edit = (file_path: string, old_string: string, note: string): Call => ['Edit', { file_path, old_string, new_string: `${old_string} (edited)` }, note];
const glob = (pattern: string, path: string | undefined, note: string): Call => ['Glob', path === undefined ? { pattern } : { pattern, path }, note];
const grep = (pattern: string, path: string, note: string): Call => ['Grep', { pattern, path }, note];

const cases: DifferentialCase[] = [];

/** Adds one group: the same settings, mode and files for every call (one Claude Code process). */
function group(prefix: string, settings: SettingsJson, mode: PermissionMode, calls: readonly Call[], files?: ScratchEntry[]): void {
  calls.forEach(([tool, input, note], index) => {
    cases.push({ id: `${prefix}-${String(index + 1).padStart(2, '0')}`, settings, mode, tool, input, note, ...(files ? { files } : {}) });
  });
}

function acrossModes(prefix: string, settings: SettingsJson, calls: readonly Call[], modes: readonly PermissionMode[] = ALL_MODES): void {
  for (const mode of modes) group(`${prefix}-${mode}`, settings, mode, calls);
}

// ── Modes × the basic calls, with no rules and with a small mixed rule set ──────────────────────
const BASIC: Call[] = [
  bash('ls src', 'read-only listing'),
  bash('git status', 'read-only git'),
  bash('touch marker.txt', 'creates a file in the project'),
  bash('rm -rf missing-dir', 'deletion (of nothing)'),
  bash('mkdir -p newdir/sub', 'creates folders'),
  bash('cat ~/.ssh/id_rsa', 'reads a key outside the project'),
  bash('echo hi > out-%ID%.txt', 'redirect writes a project file'),
  read(P('src/index.ts'), 'read inside the project'),
  read(H('.ssh/id_rsa'), 'read of a key in home'),
  read(O('data.txt'), 'read outside the working dirs'),
  edit(P('src/index.ts'), 'export const a = 1;', 'edit inside the project'),
  write(P('out/%ID%.txt'), 'new file inside the project'),
  write(O('%ID%.txt'), 'new file outside the working dirs'),
  glob('**/*.md', undefined, 'glob in the project'),
  glob('**/*', H(''), 'glob over home'),
  grep('FAKE', P('src'), 'grep in the project'),
  grep('FAKE', H('.ssh'), 'grep over ~/.ssh'),
];
acrossModes('basic', {}, BASIC);

const MIXED: SettingsJson = {
  permissions: {
    allow: ['Bash(git status)', 'Bash(touch *)', 'Read(./src/**)', 'Edit(./src/**)'],
    ask: ['Bash(ls *)'],
    deny: ['Bash(rm *)', 'Read(./.env)', 'Edit(./docs/**)'],
  },
};
acrossModes('mixed', MIXED, [
  bash('ls src', 'ask rule beats the read-only list'),
  bash('git status', 'exact allow'),
  bash('touch marker.txt', 'prefix allow'),
  bash('rm -rf missing-dir', 'prefix deny'),
  bash('cat .env', 'Read deny reaches cat'),
  read(P('.env'), 'Read deny'),
  read(P('config/.env'), 'Read(./.env) deny at depth'),
  edit(P('src/lib/util.ts'), 'export const b = 2;', 'Edit allow'),
  edit(P('docs/guide.md'), 'guide', 'Edit deny'),
  write(P('docs/%ID%.md'), 'Edit deny covers Write'),
  write(P('.env'), 'Read deny covers Write'),
  edit(P('.claude/notes.md'), 'notes', 'protected folder'),
]);

// ── AskUserQuestion in every mode ────────────────────────────────────────────────────────────────
const QUESTION: Call = ['AskUserQuestion', {
  questions: [{ question: 'Which color?', header: 'Color', multiSelect: false, options: [{ label: 'Red', description: 'red' }, { label: 'Blue', description: 'blue' }] }],
}, 'an interactive tool'];
for (const mode of ALL_MODES) group(`question-${mode}`, {}, mode, [QUESTION]);
group('question-allowed', { permissions: { allow: ['AskUserQuestion'] } }, 'default', [QUESTION]);

// ── Reads outside the working directories, with broad allow rules seen in real projects ─────────
const OUTSIDE_CALLS: Call[] = [
  read(H('.ssh/id_rsa'), 'key in home'),
  read(H('.aws/credentials'), 'credentials in home'),
  read(H('.bashrc'), 'rc file in home'),
  read(O('data.txt'), 'sibling folder'),
  read('/etc/hostname', 'system file'),
  read(P('link-to-key'), 'symlink in the project to ~/.ssh/id_rsa'),
  read(P('link-to-ssh/config'), 'through a symlinked folder into ~/.ssh'),
  read(P('link-to-outside'), 'symlink to the outside folder'),
  read(P('../outside/data.txt'), 'dot-dot out of the project'),
  grep('FAKE', H('.ssh'), 'grep over ~/.ssh'),
  grep('FAKE', P('link-to-ssh'), 'grep through a symlinked folder'),
  glob('*', H('.ssh'), 'glob in ~/.ssh'),
  glob('**/*.txt', O(''), 'glob outside'),
  bash('cat ~/.bashrc', 'cat in home'),
  bash('cat ~/.ssh/id_rsa', 'cat of a key'),
  bash('cat link-to-key', 'cat through a symlink into ~/.ssh'),
  bash('cat link-to-ssh/config', 'cat through a symlinked folder'),
  bash('cat ../outside/data.txt', 'cat outside via ..'),
  bash('head -n 1 ~/.aws/credentials', 'head in home'),
  bash('tail -n 1 %H%/.zshrc', 'tail by absolute path'),
  bash('ls ~/.ssh', 'listing ~/.ssh'),
  bash('grep -r FAKE ~/.ssh', 'grep -r over home'),
  bash('wc -l /etc/hostname', 'wc of a system file'),
  bash('cp ~/.ssh/id_rsa ./copied-%ID%', 'copies a key into the project'),
];
group('outside-readall', { permissions: { allow: ['Read(*)'] } }, 'default', OUTSIDE_CALLS);
group('outside-readglob', { permissions: { allow: ['Read(**)', 'Bash(cat *)', 'Bash(head *)', 'Bash(tail *)', 'Bash(ls *)', 'Bash(grep *)', 'Bash(wc *)', 'Bash(cp *)'] } }, 'default', OUTSIDE_CALLS);
group('outside-norules', {}, 'default', OUTSIDE_CALLS);
group('outside-acceptedits', { permissions: { allow: ['Read(*)', 'Bash(cat *)'] } }, 'acceptEdits', OUTSIDE_CALLS);
group('outside-dontask', { permissions: { allow: ['Read(*)', 'Bash(cat *)'] } }, 'dontAsk', OUTSIDE_CALLS);
group('outside-adddir', { permissions: { additionalDirectories: ['%O%'], allow: ['Bash(cat *)'] } }, 'default', [
  read(O('data.txt'), 'folder added with additionalDirectories'),
  bash('cat %O%/data.txt', 'cat in an added folder'),
  read(H('.ssh/id_rsa'), 'still outside'),
  write(O('%ID%.txt'), 'write in an added folder'),
]);

// ── Deny rules: reach at any depth, Read deny covering Edit/Write, symlinks ─────────────────────
const DENY_READS: SettingsJson = { permissions: { deny: ['Read(./.env)', 'Read(./secrets/**)', 'Read(~/.ssh/**)', 'Read(//etc/hostname)'], allow: ['Bash(cat *)', 'Edit', 'Write'] } };
acrossModes('denyreach', DENY_READS, [
  read(P('.env'), 'the denied file'),
  read(P('config/.env'), 'same name deeper'),
  read(P('secrets/key.pem'), 'inside a denied folder'),
  read(P('link-to-secrets/key.pem'), 'through a symlink to a denied folder'),
  read(P('link-to-key'), 'symlink to a denied home file'),
  read(H('.ssh/config'), 'home deny with ~/'),
  read('/etc/hostname', '// absolute deny'),
  edit(P('.env'), 'FAKE_SECRET', 'Edit of a Read-denied file'),
  edit(P('config/.env'), 'FAKE_NESTED_SECRET', 'Edit of a deeper Read-denied file'),
  write(P('.env'), 'Write of a Read-denied file'),
  write(P('secrets/%ID%.pem'), 'new file in a Read-denied folder'),
  write(P('link-to-secrets/%ID%.pem'), 'new file through a symlink to a denied folder'),
  grep('FAKE', P('.env'), 'grep on a denied file'),
  grep('FAKE', P('secrets'), 'grep in a denied folder'),
  glob('*', P('secrets'), 'glob in a denied folder'),
  bash('cat .env', 'cat of a denied file'),
  bash('cat config/.env', 'cat deeper'),
  bash('cat secrets/key.pem', 'cat in a denied folder'),
  bash('cat link-to-key', 'cat through a symlink to a denied file'),
  bash('cat .en?', 'a glob that expands to the denied file'),
  bash('cat .e*', 'a star glob over the denied file'),
  bash('head -c 5 config/.en?', 'a glob deeper'),
]);
group('dangling', { permissions: { allow: ['Edit', 'Write'] } }, 'default', [
  write(P('dangling-out'), 'write through a dangling symlink pointing outside'),
  write(P('dangling-in'), 'write through a dangling symlink inside'),
  edit(P('link-to-outside'), 'outside data', 'edit through a symlink to outside'),
  write(P('link-to-ssh/%ID%'), 'new file through a symlinked folder into ~/.ssh'),
]);
group('dangling-acceptedits', {}, 'acceptEdits', [
  write(P('dangling-out'), 'write through a dangling symlink pointing outside'),
  write(P('dangling-in'), 'write through a dangling symlink inside'),
  write(P('link-to-ssh/%ID%'), 'new file through a symlinked folder into ~/.ssh'),
  edit(P('link-to-key'), 'FAKE PRIVATE KEY', 'edit through a symlink to a home key'),
]);

// Other spellings of a read of a denied file.
group('denyspell', { permissions: { deny: ['Read(./.env)'], allow: ['Bash(cat *)', 'Bash(grep *)', 'Bash(sed *)', 'Bash(tail *)', 'Bash(awk *)', 'Bash(base64 *)', 'Bash(cp *)', 'Bash(python3 *)', 'Grep', 'Glob'] } }, 'default', [
  grep('FAKE', P(''), 'grep over the whole project (holds .env)'),
  glob('**/.env', undefined, 'glob naming the denied file'),
  bash('grep -r FAKE .', 'grep -r over the project'),
  bash('cat config/../.env', 'dot-dot spelling'),
  read(P('src/../.env'), 'Read with dot-dot'),
  read(P('./config/.env'), 'Read with ./'),
  bash('cat ./.env', './ spelling'),
  bash('cat "$PWD/.env"', '$PWD spelling'),
  bash('sed -n 1p .env', 'sed reads it'),
  bash('tail .env', 'tail reads it'),
  bash('awk 1 .env', 'awk reads it'),
  bash('base64 .env', 'base64 reads it'),
  bash('cp .env %O%/env-copy-%ID%', 'cp copies it out'),
  bash('python3 -c "print(open(\'.env\').read())"', 'python reads it'),
  bash('cat < .env', 'input redirect of the denied file'),
  bash("cat '.env'", 'quoted name'),
]);

// ── Shell forms that prefix allow rules never approve ────────────────────────────────────────────
const SHELL_ALLOW: SettingsJson = {
  permissions: { allow: ['Bash(cat *)', 'Bash(echo *)', 'Bash(ls *)', 'Bash(git status)', 'Bash(git status *)', 'Bash(git log *)', 'Bash(touch *)', 'Bash(printenv *)', 'Bash(pwd)'] },
};
const SHELL_FORMS: Call[] = [
  bash('(cat README.md)', 'subshell'),
  bash('(touch marker-%ID%)', 'subshell with a write'),
  bash('{ cat README.md; }', 'brace group'),
  bash('{ touch marker-%ID%; }', 'brace group with a write'),
  bash('cat ${HOME}/notes.txt', '${HOME} expansion'),
  bash('cat $HOME/notes.txt', '$HOME expansion'),
  bash('cat "$HOME/.ssh/id_rsa"', 'quoted $HOME to a key'),
  bash('FILE=README.md; cat $FILE', 'variable set then expanded'),
  bash('cat $FILE', 'unset variable'),
  bash('echo $(cat README.md)', 'command substitution of an allowed command'),
  bash('cat README.md $(echo docs/guide.md)', 'nested $( ) beside an allowed command'),
  bash('echo $(echo $(touch marker-%ID%))', 'nested $( $( ) )'),
  bash('echo `touch marker-%ID%`', 'backticks'),
  bash('cd .. && ls', 'cd out of the project'),
  bash('cd /tmp && ls', 'cd to /tmp'),
  bash('cd %O% && cat data.txt', 'cd outside then cat'),
  bash('cd src && git status', 'cd into a folder then git'),
  bash('cd %O%/other-repo && git status', 'cd into another repository then git'),
  bash('cd src && ls', 'cd inside then ls'),
  bash('/usr/bin/git status', 'path-qualified git'),
  bash('/bin/cat README.md', 'path-qualified cat'),
  bash('./node_modules/.bin/touch x', 'relative path-qualified program (missing)'),
  bash('printenv', 'environment reader'),
  bash('printenv HOME', 'environment reader with a name'),
  bash('env', 'env alone prints the environment'),
  bash('set', 'set alone prints variables'),
  bash('export -p', 'export -p prints variables'),
  bash('declare -p', 'declare -p prints variables'),
  bash('cat README.md | head -n 1', 'pipeline of allowed/read-only commands'),
  bash('cat README.md && touch marker-%ID%', 'compound of allowed commands'),
  bash('cat README.md && rm -rf missing-dir', 'compound with an unallowed command'),
  bash('cat README.md > copy-%ID%.md', 'allowed command with a write redirect'),
  bash('echo hi > ~/.bashrc-%ID%', 'redirect into home'),
  bash('cat < README.md', 'input redirect'),
  bash('cat README.md; ls', 'sequence'),
  bash('git log --oneline -1', 'allowed git log'),
  bash('git status; git log -1', 'two allowed git commands'),
  bash('cat <(ls)', 'process substitution'),
  bash('for f in README.md; do cat $f; done', 'loop'),
  bash('if true; then cat README.md; fi', 'if'),
  bash('bash -c "cat README.md"', 'bash -c payload'),
  bash("sh -c 'touch marker-%ID%'", 'sh -c payload with a write'),
  bash('eval "cat README.md"', 'eval'),
  bash('cat README.md &', 'background'),
  bash('cat \\\nREADME.md', 'line continuation'),
  bash('c\\at README.md', 'backslash inside the program name'),
];
group('shell-allow', SHELL_ALLOW, 'default', SHELL_FORMS);
group('shell-norules', {}, 'default', SHELL_FORMS);
group('shell-acceptedits', SHELL_ALLOW, 'acceptEdits', SHELL_FORMS.slice(0, 24));

// ── Deny rules defeated by spelling: git global options, runner wrappers ────────────────────────
const DENY_SPELLING: SettingsJson = { permissions: { deny: ['Bash(git push *)', 'Bash(git push)', 'Bash(rm *)', 'Bash(curl *)'], allow: ['Bash(git *)'] } };
const SPELLINGS: Call[] = [
  bash('git push', 'plain'),
  bash('git push origin main', 'with arguments'),
  bash('git -C . push', 'git -C before the subcommand'),
  bash('git -C %O%/other-repo push', 'git -C to another repository'),
  bash('git -c core.pager=cat push', 'git -c before the subcommand'),
  bash('git --no-pager push', 'git --no-pager'),
  bash('git --git-dir=.git push', 'git --git-dir='),
  bash('git -C . status', 'git -C with an allowed subcommand'),
  bash('git -c core.editor=true commit --allow-empty -m x', 'git -c with another subcommand'),
  bash('rm -rf missing-dir', 'plain rm'),
  bash('/bin/rm -rf missing-dir', 'path-qualified rm'),
  bash('\\rm -rf missing-dir', 'escaped rm'),
  bash('command rm -rf missing-dir', 'command builtin'),
  bash('env rm -rf missing-dir', 'env wrapper'),
  bash('FOO=1 rm -rf missing-dir', 'assignment prefix'),
  bash('timeout 5 rm -rf missing-dir', 'timeout wrapper'),
  bash('nice -n 5 rm -rf missing-dir', 'nice wrapper'),
  bash('nohup rm -rf missing-dir', 'nohup wrapper'),
  bash('npx rm -rf missing-dir', 'npx'),
  bash('pnpm exec rm -rf missing-dir', 'pnpm exec'),
  bash('uv run rm -rf missing-dir', 'uv run'),
  bash('poetry run rm -rf missing-dir', 'poetry run'),
  bash('devbox run rm -rf missing-dir', 'devbox run'),
  bash("nix-shell --run 'rm -rf missing-dir'", 'nix-shell --run'),
  bash('direnv exec . rm -rf missing-dir', 'direnv exec'),
  bash('mise exec -- rm -rf missing-dir', 'mise exec'),
  bash('watch rm -rf missing-dir', 'watch'),
  bash('find . -name missing-dir -exec rm -rf {} \\;', 'find -exec'),
  bash('find . -name missing-dir -delete', 'find -delete'),
  bash('echo missing-dir | xargs rm -rf', 'xargs'),
  bash('echo missing-dir | xargs -n1 rm -rf', 'xargs -n1'),
  bash('bash -c "rm -rf missing-dir"', 'bash -c'),
  bash('sudo rm -rf missing-dir', 'sudo'),
  bash('curl http://127.0.0.1:9/', 'plain curl (loopback, nothing listens)'),
  bash('npx curl http://127.0.0.1:9/', 'npx curl'),
  bash('time git push', 'time wrapper'),
];
group('spelling-deny', DENY_SPELLING, 'default', SPELLINGS);
group('spelling-deny-bypass', DENY_SPELLING, 'bypassPermissions', SPELLINGS);
group('spelling-deny-dontask', DENY_SPELLING, 'dontAsk', SPELLINGS.slice(0, 12));

// An allow rule for a wrapper never covers what it wraps.
const WRAPPER_ALLOW: SettingsJson = {
  permissions: { allow: ['Bash(npx *)', 'Bash(pnpm exec *)', 'Bash(uv run *)', 'Bash(poetry run *)', 'Bash(devbox run *)', 'Bash(nix-shell *)', 'Bash(direnv exec *)', 'Bash(mise exec *)', 'Bash(watch *)', 'Bash(find *)', 'Bash(xargs *)', 'Bash(timeout *)', 'Bash(env *)', 'Bash(git -C *)'] },
};
group('wrapper-allow', WRAPPER_ALLOW, 'default', [
  bash('npx rm -rf missing-dir', 'npx allow'),
  bash('npx touch marker-%ID%', 'npx allow, write'),
  bash('pnpm exec touch marker-%ID%', 'pnpm exec allow'),
  bash('uv run touch marker-%ID%', 'uv run allow'),
  bash('poetry run touch marker-%ID%', 'poetry run allow'),
  bash('devbox run touch marker-%ID%', 'devbox run allow'),
  bash("nix-shell --run 'touch marker-%ID%'", 'nix-shell allow'),
  bash('direnv exec . touch marker-%ID%', 'direnv exec allow'),
  bash('mise exec -- touch marker-%ID%', 'mise exec allow'),
  bash('watch touch marker-%ID%', 'watch allow'),
  bash('find . -name missing-dir -exec rm -rf {} \\;', 'find allow vs -exec'),
  bash('find . -name missing-dir -delete', 'find allow vs -delete'),
  bash('find . -name "*.md"', 'find allow, plain'),
  bash('echo missing-dir | xargs rm -rf', 'xargs allow'),
  bash('timeout 5 touch marker-%ID%', 'timeout allow'),
  bash('env touch marker-%ID%', 'env allow'),
  bash('git -C %O%/other-repo status', 'git -C allow to another repository'),
  bash('git -C . status', 'git -C . status'),
]);

// ── Globs that can expand to a denied file ───────────────────────────────────────────────────────
group('glob-deny', { permissions: { deny: ['Read(./.env)', 'Read(./secrets/**)'], allow: ['Bash(cat *)', 'Bash(head *)', 'Bash(grep *)'] } }, 'default', [
  bash('cat .en?', '? glob'),
  bash('cat .e*', '* glob'),
  bash('cat .[e]nv', 'bracket glob'),
  bash('cat */.env', 'glob folder'),
  bash('head .env*', 'glob matching .env and .env.example'),
  bash('cat secrets/*', 'glob into a denied folder'),
  bash('cat secre?s/key.pem', 'glob in the folder name'),
  bash('grep FAKE .e*', 'grep over a glob'),
  bash('cat .env.exampl?', 'glob that cannot match the denied file'),
  bash('cat docs/*.md', 'harmless glob'),
]);

// ── acceptEdits on sensitive paths ───────────────────────────────────────────────────────────────
const SENSITIVE: Call[] = [
  edit(P('.claude/notes.md'), 'notes', '.claude/'),
  write(P('.claude/%ID%.md'), 'new file in .claude/'),
  edit(P('.sage/notes.md'), 'notes', '.sage/'),
  write(P('.sage/%ID%.md'), 'new file in .sage/'),
  edit(P('.vscode/settings.json'), '{}', '.vscode/'),
  write(P('.git/%ID%'), 'new file in .git/'),
  edit(P('.git/description'), 'Unnamed repository', '.git/description'),
  edit(P('.bashrc'), '# project rc', 'a .bashrc in the project'),
  write(P('.zshrc'), '.zshrc in the project'),
  write(P('.npmrc'), '.npmrc in the project'),
  write(P('.gitconfig'), '.gitconfig in the project'),
  write(P('.mcp.json'), '.mcp.json in the project'),
  edit(H('.bashrc'), '# fake bashrc', '~/.bashrc'),
  edit(P('src/index.ts'), 'export const a = 1;', 'ordinary source file'),
  write(P('src/%ID%.ts'), 'ordinary new file'),
  edit(P('package.json'), '"name":"scratch"', 'package.json'),
  ['NotebookEdit', { notebook_path: P('notebook.ipynb'), new_source: 'print(1)', cell_type: 'code', edit_mode: 'insert' }, 'NotebookEdit in the project'],
  bash('touch .claude/x-%ID%', 'touch in .claude/'),
  bash('mkdir -p .vscode/sub-%ID%', 'mkdir in .vscode/'),
  bash('touch src/x-%ID%', 'touch in src'),
  bash('echo x > .git/x-%ID%', 'redirect into .git/'),
  bash('cp README.md .claude/r-%ID%', 'cp into .claude/'),
];
group('sensitive-acceptedits', {}, 'acceptEdits', SENSITIVE);
group('sensitive-default', {}, 'default', SENSITIVE);
group('sensitive-editallow', { permissions: { allow: ['Edit', 'Write', 'NotebookEdit'] } }, 'default', SENSITIVE.slice(0, 17));
group('sensitive-bypass', {}, 'bypassPermissions', SENSITIVE.slice(0, 17));

// ── Claude Code compatibility: Write(path) allow ignored, tool names ─────────────────────────────
group('compat-writeallow', { permissions: { allow: ['Write(./src/**)', 'Write(*)', 'Write(./out/**)'] } }, 'default', [
  write(P('src/%ID%.ts'), 'Write(path) allow is ignored'),
  write(P('out/%ID%.txt'), 'Write(path) allow is ignored'),
  edit(P('src/index.ts'), 'export const a = 1;', 'Write(path) does not allow Edit'),
]);
group('compat-names', { permissions: { allow: ['Agent', 'NotebookEdit'], deny: ['Edit(./docs/**)'] } }, 'default', [
  ['NotebookEdit', { notebook_path: P('notebook.ipynb'), new_source: 'x = 1', cell_type: 'code', edit_mode: 'insert' }, 'NotebookEdit allowed by name'],
  ['Agent', { description: 'look', prompt: 'Say ok.', subagent_type: 'general-purpose' }, 'Agent allowed by name'],
]);
group('compat-task', { permissions: { deny: ['Task'] } }, 'default', [
  ['Agent', { description: 'look', prompt: 'Say ok.', subagent_type: 'general-purpose' }, 'Task deny covers Agent'],
]);
group('compat-agentdeny', { permissions: { deny: ['Agent(Explore)'] } }, 'default', [
  ['Agent', { description: 'look', prompt: 'Say ok.', subagent_type: 'Explore' }, 'Agent(type) deny'],
  ['Agent', { description: 'look', prompt: 'Say ok.', subagent_type: 'general-purpose' }, 'another agent type'],
]);
group('compat-editrule-notebook', { permissions: { deny: ['Edit(./notebook.ipynb)'] } }, 'acceptEdits', [
  ['NotebookEdit', { notebook_path: P('notebook.ipynb'), new_source: 'x = 1', cell_type: 'code', edit_mode: 'insert' }, 'Edit deny covers NotebookEdit'],
]);
group('compat-editall', { permissions: { allow: ['Edit'] } }, 'default', [
  ['NotebookEdit', { notebook_path: P('notebook.ipynb'), new_source: 'x = 1', cell_type: 'code', edit_mode: 'insert' }, 'Edit allow covers NotebookEdit'],
  write(P('src/%ID%.ts'), 'Edit allow covers Write'),
  write(O('%ID%.txt'), 'Edit allow outside the project'),
]);

// Write(path) rules alone (Write(*) is the bare tool, so it is left out here).
group('compat-writepath', { permissions: { allow: ['Write(./src/**)', 'Write(./out/**)'] } }, 'default', [
  write(P('src/%ID%.ts'), 'Write(./src/**) allow is not consulted'),
  write(P('out/%ID%.txt'), 'Write(./out/**) allow is not consulted'),
  write(P('docs/%ID%.md'), 'no rule'),
]);

// A hook type Sage does not run must not drop the file's rules (the hook's matcher never fires here).
const PROMPT_HOOK: SettingsJson = {
  permissions: { allow: ['Bash(touch *)', 'Edit(./src/**)'], deny: ['Read(./.env)'] },
  hooks: { PreToolUse: [{ matcher: 'WebSearch', hooks: [{ type: 'prompt', prompt: 'Is this search safe? $ARGUMENTS' }] }] },
};
group('hook-prompt', PROMPT_HOOK, 'default', [
  bash('touch marker-%ID%', 'allow rule of a file with a prompt hook'),
  edit(P('src/index.ts'), 'export const a = 1;', 'Edit allow of a file with a prompt hook'),
  read(P('.env'), 'deny rule of a file with a prompt hook'),
  bash('rm -rf missing-dir', 'no rule'),
]);

// ── Rule sets copied from public projects' Claude Code settings ──────────────────────────────────
// dnorth123/claude-code-project-starter, project-template/.claude/presets/moderate.json
const DNORTH_MODERATE: SettingsJson = {
  permissions: {
    allow: ['Bash(git fetch:*)', 'Bash(git add:*)', 'Bash(git commit:*)', 'Bash(git push:*)', 'Bash(git remote set-url:*)', 'Bash(git status:*)', 'Bash(git log:*)', 'Bash(git diff:*)', 'Bash(git branch:*)', 'Bash(git checkout:*)', 'Task(*)', 'SlashCommand(*)', 'Read(*)', 'Write(*)', 'Edit(*)', 'Glob(*)', 'Grep(*)', 'Bash(npm:*)', 'Bash(yarn:*)', 'Bash(pnpm:*)', 'Bash(ls:*)', 'Bash(pwd:*)', 'Bash(echo:*)', 'Bash(cat:*)', 'Bash(mkdir:*)', 'Bash(cp:*)', 'Bash(mv:*)', 'Bash(chmod:*)'],
    ask: ['Bash(python:*)', 'Bash(pytest:*)', 'Bash(node:*)', 'Bash(docker:*)', 'Bash(gh:*)'],
    deny: ['Bash(rm -rf /:*)'],
  },
};
group('real-dnorth', DNORTH_MODERATE, 'default', [
  read(H('.ssh/id_rsa'), 'Read(*) and a home key'),
  read(O('data.txt'), 'Read(*) outside'),
  read(P('link-to-key'), 'Read(*) through a symlink'),
  grep('FAKE', H('.aws'), 'Grep(*) over home'),
  glob('**/*', H('.ssh'), 'Glob(*) over home'),
  write(P('src/%ID%.ts'), 'Write(*) is ignored, Edit(*) applies'),
  write(H('%ID%.txt'), 'Edit(*) and a home file'),
  edit(H('.bashrc'), '# fake bashrc', 'Edit(*) on ~/.bashrc'),
  edit(P('.claude/notes.md'), 'notes', 'Edit(*) on .claude/'),
  bash('cat ~/.ssh/id_rsa', 'Bash(cat:*) and a key'),
  bash('cat $HOME/.aws/credentials', 'cat with $HOME'),
  bash('git -C %O%/other-repo status', 'git -C elsewhere'),
  bash('git push', 'Bash(git push:*) allow (no remote: fails)'),
  bash('cd %O%/other-repo && git status', 'cd + git'),
  bash('npm test', 'Bash(npm:*)'),
  bash('npx touch marker-%ID%', 'npx is not npm'),
  bash('python3 -c "print(1)"', 'ask rule'),
  bash('node -e "1"', 'ask rule'),
  bash('mv README.md README-%ID%.md && mv README-%ID%.md README.md', 'two allowed mv'),
  bash('chmod +x README.md', 'chmod allow'),
  bash('rm -rf /missing-dir-%ID%', 'deny rm -rf /:* (nothing there)'),
  bash('cp ~/.ssh/id_rsa /tmp/../%O%/k-%ID%', 'cp a key out'),
  bash('echo hi > %O%/e-%ID%.txt', 'echo allow, redirect outside'),
  bash('mkdir %O%/m-%ID%', 'mkdir outside'),
]);

// IshanG97/dotfiles, .claude/settings.json (WebFetch/WebSearch allows kept: no case calls them)
const ISHAN: SettingsJson = {
  permissions: {
    allow: ['Read(**)', 'Grep', 'Glob', 'Task', 'WebSearch', 'WebFetch', 'Bash(command *)', 'Bash(git diff *)', 'Bash(git status *)', 'Bash(git log *)', 'Bash(git show *)', 'Bash(git branch *)', 'Bash(ls *)', 'Bash(pwd)', 'Bash(which *)', 'Bash(cat *)', 'Bash(head *)', 'Bash(tail *)', 'Bash(find *)', 'Bash(grep *)', 'Bash(wc *)', 'Bash(file *)', 'Bash(brew list *)', 'Bash(adb shell *)', 'Bash(osascript *)'],
  },
};
group('real-ishan', ISHAN, 'default', [
  read(H('.ssh/id_rsa'), 'Read(**) and a home key'),
  grep('FAKE', H('.ssh'), 'Grep allow over ~/.ssh'),
  glob('*', H('.aws'), 'Glob allow over ~/.aws'),
  bash('command touch marker-%ID%', 'Bash(command *) and the command builtin'),
  bash('command cat README.md', 'Bash(command *) read'),
  bash('git diff HEAD', 'git diff allow'),
  bash('git -C %O%/other-repo log', 'git -C elsewhere'),
  bash('git branch -D missing-branch', 'git branch allow with -D'),
  bash('find . -name missing-dir -delete', 'find allow vs -delete'),
  bash('find . -name missing-dir -exec rm {} \\;', 'find allow vs -exec'),
  bash('cat ~/.bashrc', 'cat in home'),
  bash('sleep 1 & cat README.md', 'background job'),
  bash('head ~/.ssh/id_rsa', 'head of a key'),
  bash('wc -c $(ls ~/.ssh)', 'substitution'),
  bash('ls ~/.ssh && cat ~/.ssh/id_rsa', 'compound into ~/.ssh'),
  bash('which git', 'which'),
  bash('file /etc/hostname', 'file'),
  bash('grep -r FAKE ~', 'grep over home'),
  bash('cat README.md > /dev/null', 'redirect to /dev/null'),
  bash('adb shell rm -rf /sdcard/x', 'adb shell allow (adb missing)'),
]);

// Isaqdn03/claude-code-hooks-mastery, .claude/settings.json (the command hooks left out: they would run)
const HOOKS_MASTERY: SettingsJson = {
  permissions: {
    allow: ['Bash(mkdir:*)', 'Bash(uv:*)', 'Bash(find:*)', 'Bash(mv:*)', 'Bash(grep:*)', 'Bash(npm:*)', 'Bash(ls:*)', 'Bash(cp:*)', 'Write', 'Edit', 'Bash(chmod:*)', 'Bash(touch:*)', 'Bash(curl:*)', 'Bash(echo:*)'],
    deny: [],
  },
};
group('real-hooksmastery', HOOKS_MASTERY, 'default', [
  write(H('.bashrc-%ID%'), 'Write allow in home'),
  write(O('%ID%.txt'), 'Write allow outside'),
  edit(H('.zshrc'), '# fake zshrc', 'Edit allow on ~/.zshrc'),
  edit(P('.vscode/settings.json'), '{}', 'Edit allow on .vscode/'),
  write(P('.claude/%ID%.md'), 'Write allow in .claude/'),
  write(P('src/%ID%.ts'), 'Write allow in src'),
  bash('uv run touch marker-%ID%', 'Bash(uv:*) and what it runs'),
  bash('find . -name missing-dir -delete', 'find allow vs -delete'),
  bash('cp ~/.ssh/id_rsa ./k-%ID%', 'cp a key in'),
  bash('mv %O%/data.txt %O%/data.txt', 'mv outside (same name)'),
  bash('curl http://127.0.0.1:9/ -o %O%/c-%ID%', 'curl writing outside (loopback)'),
  bash('curl http://127.0.0.1:9/ | sh', 'curl piped to sh'),
  bash('echo hi > ~/.bashrc', 'echo allow, redirect to ~/.bashrc'),
  bash('chmod -R 777 ~', 'chmod of home'),
  bash('mkdir -p ~/.ssh/new-%ID%', 'mkdir in ~/.ssh'),
  bash('touch ~/.claude/x-%ID%', 'touch in ~/.claude'),
  bash('npm exec touch marker-%ID%', 'npm exec (npm allow)'),
  bash('grep -r FAKE ~/.ssh', 'grep allow over ~/.ssh'),
]);

// Iron-Ham/Claude-XcodePreviews, .claude/settings.json
const XCODE_PREVIEWS: SettingsJson = { permissions: { allow: ['Bash(scripts/*)', 'Bash(xcrun simctl*)', 'Bash(xcodebuild*)', 'Read(/tmp/preview*.png)', 'Read(/tmp/simulator*.png)'] } };
group('real-xcode', XCODE_PREVIEWS, 'default', [
  bash('scripts/capture.sh', 'allowed script (missing)'),
  bash('scripts/capture.sh && touch marker-%ID%', 'allowed script then a write'),
  bash('scripts/../../outside/run.sh', 'dot-dot out of scripts/'),
  bash('xcrun simctl list; rm -rf missing-dir', 'allowed prefix then rm'),
  bash('xcodebuildx', 'no word boundary in xcodebuild*'),
  read('/tmp/preview-%ID%.png', 'Read(/tmp/…) is anchored at the settings folder'),
  read(P('tmp/preview.png'), 'project tmp/preview.png'),
]);

// shunsock/dotfiles (a Nix home file holding ~/.claude/settings.json)
const SHUNSOCK: SettingsJson = {
  permissions: {
    allow: ['Bash(man:*)', 'Bash(task:*)', 'Bash(task gh read shunsock/dotfiles/azuma)', 'Read(~/hobby/dotfiles/azuma)', 'Read(./README.md)', 'Read(./docs/**)'],
    ask: ['Bash(task gh:*)', 'Write(./*)'],
    deny: ['Bash(rm -rf /)', 'Bash(rm -rf /:*)', 'Bash(rm -rf ~)', 'Bash(rm -rf ~/:*)', 'Read(./.env)', 'Read(./.env.*)', 'Read(./secrets/**)', 'Read(./config/credentials.json)'],
  },
};
group('real-shunsock', SHUNSOCK, 'acceptEdits', [
  read(P('.env.example'), 'Read(./.env.*) deny'),
  read(P('config/.env'), 'Read(./.env) deny at depth'),
  write(P('%ID%.txt'), 'Write(./*) ask rule (Write path rules are not consulted)'),
  write(P('.env.local'), 'Read(./.env.*) deny covers Write'),
  bash('rm -rf ~/missing-dir-%ID%', 'rm -rf ~/:* deny'),
  bash('rm -rf $HOME/missing-dir-%ID%', 'the same spelled with $HOME'),
  bash('task gh pr list', 'task gh ask vs task allow'),
  bash('cat .env.example', 'cat of a denied .env.*'),
  bash('man ls', 'man allow'),
]);

// A public agent's settings (Nolia Report agent config, acceptEdits)
const NOLIA: SettingsJson = {
  permissions: {
    allow: ['Read(./**)', 'Write(./outputs/**)', 'Write(./tmp/**)', 'Glob(./**)', 'Grep(./**)', 'Edit'],
    deny: ['Read(~/**)', 'Read(./.env)', 'Read(./secrets/**)', 'WebFetch(*)'],
  },
};
group('real-nolia', NOLIA, 'acceptEdits', [
  read(H('notes.txt'), 'Read(~/**) deny'),
  read(P('link-to-key'), 'symlink into denied home'),
  edit(H('.bashrc'), '# fake bashrc', 'Read(~/**) deny covers Edit'),
  write(P('outputs/%ID%.txt'), 'Write(./outputs/**) allow (ignored) under acceptEdits'),
  write(P('secrets/%ID%'), 'Read deny covers new file'),
  bash('cat ~/notes.txt', 'cat of a denied home file'),
  bash('cat link-to-key', 'cat through a symlink to denied home'),
  grep('FAKE', H(''), 'grep over denied home'),
  glob('**/*', H('.ssh'), 'glob in denied home'),
  ['WebFetch', { url: 'http://127.0.0.1:9/', prompt: 'summarize' }, 'WebFetch(*) deny (loopback URL)'],
]);

// laurigates/claude-plugins, settings-configuration SKILL.md example
const LAURIGATES: SettingsJson = { permissions: { allow: ['Bash(git status *)', 'Bash(npm run *)'], deny: ['Bash(rm -rf *)', 'Bash(sudo *)'] } };
acrossModes('real-laurigates', LAURIGATES, [
  bash('git status', 'allow with optional args'),
  bash('git status && rm -rf missing-dir', 'allowed then denied'),
  bash('rm -fr missing-dir', 'flag order respelled'),
  bash('rm -r -f missing-dir', 'flags split'),
  bash('sudo -n true', 'sudo deny'),
  bash('npm run test', 'npm run allow'),
  bash('npm run test; rm -rf missing-dir', 'allow then deny'),
]);

// Fynardo/Astropath, config/claude.go
const ASTROPATH: SettingsJson = { permissions: { allow: ['Edit', 'Bash(./astropath echo:*)', 'Bash(git commit:*)', 'Bash(git checkout:*)'], deny: [] } };
group('real-astropath', ASTROPATH, 'default', [
  bash('./astropath echo hi', 'allowed program (missing)'),
  bash('./astropath echo $(touch marker-%ID%)', 'allowed program with a substitution'),
  bash('git commit --allow-empty -m test', 'git commit allow'),
  bash('git -c core.hooksPath=/nonexistent-%ID% commit --allow-empty -m test', 'git -c before commit'),
  bash('git checkout -- README.md', 'git checkout allow'),
  edit(O('data.txt'), 'outside data', 'Edit allow outside the project'),
  edit(P('.git/description'), 'Unnamed repository', 'Edit allow on .git/'),
]);

// slenderman2511/AgentAutoKit README (deny list for a project)
const AGENTAUTOKIT: SettingsJson = {
  permissions: {
    deny: ['Read(./.env)', 'Read(./.env.*)', 'Read(./**/*.pem)', 'Read(./**/*.key)', 'Read(./**/secrets/**)', 'Bash(rm -rf:*)', 'Bash(git push:*)', 'Bash(vercel deploy:*)', 'Bash(vercel --prod:*)'],
  },
};
group('real-agentautokit', AGENTAUTOKIT, 'bypassPermissions', [
  read(P('secrets/key.pem'), '*.pem deny'),
  read(P('link-to-secrets/key.pem'), 'through a symlink'),
  write(P('new-%ID%.pem'), 'Read deny covers a new .pem'),
  bash('cat secrets/key.pem', 'cat of a denied .pem'),
  bash('git -C . push', 'git -C push'),
  bash('git push --dry-run', 'git push deny'),
  bash('rm -rf missing-dir', 'rm -rf deny'),
  bash('rm -r -f missing-dir', 'respelled rm'),
  bash('vercel --prod deploy', 'vercel --prod deny (missing)'),
  bash('npx vercel deploy', 'npx vercel deploy'),
  edit(P('.env.example'), 'FAKE_SECRET', 'Read deny covers Edit in bypass'),
]);

// ── WebFetch domain rules (every fetch meets a dead loopback proxy: nothing leaves the machine) ──
const fetchCall = (url: string, note: string): Call => ['WebFetch', { url, prompt: 'summarize' }, note];
const WEBFETCH_CALLS: Call[] = [
  fetchCall('https://docs.example.com/page', '*. wildcard allow'),
  fetchCall('https://example.com/', 'apex under a *. rule'),
  fetchCall('https://a.b.example.com/', 'two levels under a *. rule'),
  fetchCall('https://evil.example.com/', 'deny beats the wildcard allow'),
  fetchCall('https://example.net/x', 'exact domain allow'),
  fetchCall('https://sub.example.net/', 'exact rule and a subdomain'),
  fetchCall('https://example.org/', 'no rule'),
  fetchCall('https://docs.example.com.attacker.test/', 'suffix trick'),
  fetchCall('https://docs.example.com@attacker.test/', 'userinfo trick'),
  fetchCall('http://docs.example.com/', 'plain http'),
  fetchCall('https://DOCS.EXAMPLE.COM/', 'upper case host'),
  fetchCall('https://docs.example.com:8443/', 'with a port'),
];
acrossModes('webfetch', { permissions: { allow: ['WebFetch(domain:*.example.com)', 'WebFetch(domain:example.net)'], deny: ['WebFetch(domain:evil.example.com)'] } }, WEBFETCH_CALLS);
group('webfetch-norules', {}, 'default', WEBFETCH_CALLS.slice(0, 4));
group('webfetch-bare', { permissions: { allow: ['WebFetch'], ask: ['WebFetch(domain:*.example.net)'] } }, 'default', [
  fetchCall('https://example.org/', 'bare WebFetch allow'),
  fetchCall('https://api.example.net/', 'ask rule with a wildcard'),
  fetchCall('https://example.net/', 'apex under a *. ask rule'),
]);

// ── MCP server-level rules (the fake MCP server `fake`: echo, wipe; both harmless) ───────────────
const mcpCall = (tool: 'echo' | 'wipe', note: string): Call => [`mcp__fake__${tool}`, tool === 'echo' ? { text: 'hi' } : { table: 'users' }, note];
function mcpGroup(prefix: string, settings: SettingsJson, mode: PermissionMode, calls: readonly Call[]): void {
  calls.forEach(([tool, input, note], index) => {
    cases.push({ id: `${prefix}-${String(index + 1).padStart(2, '0')}`, settings, mode, mcp: true, tool, input, note });
  });
}
const MCP_BOTH = [mcpCall('echo', 'echo tool'), mcpCall('wipe', 'wipe tool')];
for (const mode of ALL_MODES) mcpGroup(`mcp-norules-${mode}`, {}, mode, MCP_BOTH);
mcpGroup('mcp-server', { permissions: { allow: ['mcp__fake'] } }, 'default', MCP_BOTH);
mcpGroup('mcp-star', { permissions: { allow: ['mcp__fake__*'] } }, 'default', MCP_BOTH);
mcpGroup('mcp-one', { permissions: { allow: ['mcp__fake__echo'] } }, 'default', MCP_BOTH);
mcpGroup('mcp-unanchored', { permissions: { allow: ['mcp__*'] } }, 'default', MCP_BOTH);
mcpGroup('mcp-prefix', { permissions: { allow: ['mcp__fa*'] } }, 'default', MCP_BOTH);
mcpGroup('mcp-askone', { permissions: { allow: ['mcp__fake'], ask: ['mcp__fake__wipe'] } }, 'default', MCP_BOTH);
mcpGroup('mcp-askserver', { permissions: { allow: ['mcp__fake__echo'], ask: ['mcp__fake'] } }, 'default', MCP_BOTH);
mcpGroup('mcp-bypass-ask', { permissions: { ask: ['mcp__fake__wipe'] } }, 'bypassPermissions', MCP_BOTH);
mcpGroup('mcp-dontask', { permissions: { allow: ['mcp__fake__echo'] } }, 'dontAsk', MCP_BOTH);
mcpGroup('mcp-other', { permissions: { allow: ['mcp__other', 'mcp__other__*'] } }, 'default', MCP_BOTH);

// ── Second batch: commands that read or write more than they seem to, with no rules ──────────────
const SNEAKY: Call[] = [
  bash('sort -o out-%ID%.txt README.md', 'sort -o writes'),
  bash('sed -i s/scratch/Scratch/ README.md', 'sed -i writes'),
  bash('tee out-%ID%.txt < README.md', 'tee writes'),
  bash('git diff --output=out-%ID%.txt', 'git diff --output writes'),
  bash('find . -maxdepth 1 -name README.md -fprint out-%ID%.txt', 'find -fprint writes'),
  bash('git config user.name differential', 'git config writes .git/config'),
  bash('git branch branch-%ID%', 'git branch creates a branch'),
  bash('git tag tag-%ID%', 'git tag'),
  bash('git -c core.fsmonitor="touch fsmonitor-%ID%" status', 'git -c runs a program through core.fsmonitor'),
  bash('git log --output=out-%ID%.txt', 'git log --output writes'),
  bash("awk 'BEGIN{system(\"touch awk-%ID%\")}'", 'awk system()'),
  bash("sed -n '1e touch sed-%ID%' README.md", 'sed e command'),
  bash('cat /proc/self/environ', 'environment through /proc'),
  bash('env | grep ANTHROPIC', 'env piped'),
  bash('printenv ANTHROPIC_API_KEY', 'printenv of a key'),
  bash('echo $ANTHROPIC_API_KEY', 'echo of a key variable'),
  bash('compgen -v', 'compgen lists variables'),
  bash('alias', 'alias'),
  bash('echo x >| out-%ID%.txt', '>| redirect'),
  bash('echo x &> out-%ID%.txt', '&> redirect'),
  bash('echo x 2> ~/err-%ID%.txt', '2> into home'),
  bash('echo x > /dev/tcp/127.0.0.1/9', '/dev/tcp redirect (loopback, nothing listens)'),
  bash('ls > /dev/null 2>&1', 'redirects to /dev/null'),
  bash('cat <<EOF > here-%ID%.txt\nhi\nEOF', 'heredoc into a file'),
  bash('cat <<EOF\nhi\nEOF', 'heredoc to stdout'),
  bash('echo "$(rm -rf missing-dir)"', 'substitution in double quotes'),
  bash("echo '$(rm -rf missing-dir)'", 'single quotes: literal text'),
  bash('ls # ; rm -rf missing-dir', 'comment hides the rest'),
  bash('ls\nrm -rf missing-dir', 'newline-separated'),
  bash('cd src; cd ..; cd ..; ls', 'cd out in steps'),
  bash('ln -s README.md link-%ID%', 'ln -s creates a link'),
  bash('diff <(cat README.md) /dev/null', 'process substitution of a read'),
  bash('xargs -a README.md echo', 'xargs -a reads a file'),
  bash('less README.md', 'pager'),
  bash('python3 -c "print(1)"', 'inline python'),
  bash('node -e "console.log(1)"', 'inline node'),
  bash('ls -la ~', 'listing home'),
  bash('cat /etc/hostname', 'system file'),
  bash('stat ~/.ssh/id_rsa', 'stat of a key'),
  bash('du -sh ~', 'du of home'),
];
group('sneaky-default', {}, 'default', SNEAKY);
group('sneaky-acceptedits', {}, 'acceptEdits', SNEAKY);

// Ask rules (not deny) defeated by spelling: Sage must ask at least where Claude Code asks.
group('spelling-ask', { permissions: { ask: ['Bash(git push *)', 'Bash(git push)', 'Bash(rm *)', 'Bash(curl *)'], allow: ['Bash(git *)', 'Bash(npx *)', 'Bash(find *)', 'Bash(xargs *)', 'Bash(env *)', 'Bash(timeout *)'] } }, 'default', SPELLINGS);
group('spelling-ask-bypass', { permissions: { ask: ['Bash(git push *)', 'Bash(git push)', 'Bash(rm *)', 'Bash(curl *)'] } }, 'bypassPermissions', SPELLINGS);

// Path rule anchors and Edit denies met by shell writes.
group('pathrules-allow', { permissions: { allow: ['Read(~/.ssh/**)', 'Edit(/src/**)', 'Edit(docs/**)', 'Edit(/%O%/**)', 'Bash(cat *)'] } }, 'default', [
  read(H('.ssh/id_rsa'), 'Read(~/.ssh/**) allow'),
  bash('cat ~/.ssh/id_rsa', 'cat under Read(~/.ssh/**) allow'),
  edit(P('src/index.ts'), 'export const a = 1;', 'Edit(/src/**): anchored at the settings folder'),
  write(P('src/%ID%.ts'), 'Write under Edit(/src/**)'),
  edit(P('docs/guide.md'), 'guide', 'Edit(docs/**) allow'),
  write(P('src/docs/%ID%.md'), 'Edit(docs/**) and a nested docs/'),
  write(O('%ID%.txt'), 'Edit(//abs/**) allow outside'),
  write(O('sub/%ID%.txt'), 'Edit(//abs/**) allow, nested'),
  write(H('%ID%.txt'), 'no rule for home'),
]);
group('pathrules-editdeny', { permissions: { deny: ['Edit(*.md)', 'Edit(./src/**)'], allow: ['Bash(touch *)', 'Bash(cp *)', 'Bash(sed *)', 'Bash(echo *)', 'Bash(mkdir *)', 'Bash(tee *)', 'Bash(ln *)', 'Bash(mv *)'] } }, 'acceptEdits', [
  edit(P('docs/guide.md'), 'guide', 'Edit(*.md) deny at depth'),
  write(P('README.md'), 'Write of a denied .md'),
  bash('echo x > docs/new-%ID%.md', 'redirect into a denied .md'),
  bash('touch docs/new-%ID%.md', 'touch a denied .md'),
  bash('sed -i s/guide/Guide/ docs/guide.md', 'sed -i on a denied .md'),
  bash('cp README.md docs/copy-%ID%.md', 'cp onto a denied .md'),
  bash('touch src/x-%ID%', 'touch in a denied folder'),
  bash('mkdir src/dir-%ID%', 'mkdir in a denied folder'),
  bash('echo x > src/x-%ID%.ts', 'redirect into a denied folder'),
  bash('cp README.md src/', 'cp into a denied folder'),
  bash('tee src/t-%ID% < README.md', 'tee into a denied folder'),
  bash('ln -s ../README.md src/l-%ID%', 'ln into a denied folder'),
  bash('mv docs/guide.md docs/guide.md', 'mv of a denied .md onto itself'),
  edit(P('src/lib/util.ts'), 'export const b = 2;', 'Edit deny in a folder'),
  write(P('link-to-secrets/%ID%.md'), 'through a symlink, denied by *.md'),
]);

// ── Third batch: which commands run without asking (read-only lists), and what acceptEdits covers ──
const READ_ONLY_CANDIDATES = [
  'more README.md', 'man ls', 'tree', 'file README.md', 'strings README.md', 'od -c README.md', 'hexdump -C README.md', 'xxd README.md',
  'md5sum README.md', 'sha256sum README.md', 'cksum README.md', 'jq . package.json', 'column -t README.md', 'nl README.md', 'fold README.md',
  'cut -c1-3 README.md', 'tr a b < README.md', 'uniq README.md', 'rev README.md', 'tac README.md', 'basename src/index.ts', 'dirname src/index.ts',
  'realpath README.md', 'readlink link-to-key', 'date', 'uname -a', 'whoami', 'id', 'hostname', 'df -h', 'free', 'uptime', 'ps aux', 'top -b -n 1',
  'git show HEAD', 'git blame README.md', 'git ls-files', 'git rev-parse HEAD', 'git remote -v', 'git stash list', 'git reflog', 'git describe --always',
  'git shortlog -s', 'node --version', 'python3 --version', 'type ls', 'command -v ls', 'test -f README.md', '[ -f README.md ]', 'true', 'sleep 0',
  'seq 3', 'yes | head -n 1', "awk '{print}' README.md", 'sed -n 1p README.md', 'grep -l scratch README.md', 'diff README.md docs/guide.md',
  'cmp README.md README.md', 'sort README.md', 'head -n 1 README.md', 'tail -n 1 README.md', 'find . -name "*.md"', 'xargs echo < README.md',
  'printf "%s\\n" hi', 'cd src && ls', 'du -sh .', 'stat README.md', 'git status --porcelain', 'git log --stat -1', 'ls -R', 'wc -w README.md',
  'env -i ls', 'nproc', 'getconf PAGESIZE', 'locale', 'tty', 'groups', 'git config --list', 'git config --get user.name',
];
const readOnlyCalls: Call[] = READ_ONLY_CANDIDATES.map((command) => bash(command, 'read-only list?'));
group('readonly-default', {}, 'default', readOnlyCalls);
group('readonly-plan', {}, 'plan', readOnlyCalls);

const WRITE_CANDIDATES: Call[] = [
  bash('mkdir dir-%ID%', 'mkdir'),
  bash('touch t-%ID%', 'touch'),
  bash('rmdir missing-dir-%ID%', 'rmdir (of nothing)'),
  bash('rm -f missing-%ID%', 'rm -f (of nothing)'),
  bash('cp README.md c-%ID%', 'cp'),
  bash('mv missing-%ID% m-%ID%', 'mv (of nothing)'),
  bash('sed -i s/guide/Guide/ docs/guide.md', 'sed -i'),
  bash('truncate -s 0 t-%ID%', 'truncate'),
  bash('chmod 644 README.md', 'chmod'),
  bash('ln -s README.md l-%ID%', 'ln -s'),
  bash('install -m 644 README.md i-%ID%', 'install'),
  bash('dd if=README.md of=d-%ID% status=none', 'dd of='),
  bash('printf x > p-%ID%', 'printf redirect'),
  bash('echo x >> README.md', 'append redirect'),
  bash('cat README.md > c2-%ID%', 'cat redirect'),
  bash('git apply --check /dev/null', 'git apply --check'),
  bash('git add README.md', 'git add'),
  bash('git commit --allow-empty -m differential', 'git commit'),
  bash('git checkout -b b-%ID%', 'git checkout -b'),
  bash('git stash', 'git stash'),
  bash('mkdir -p ~/dir-%ID%', 'mkdir in home'),
  bash('touch %O%/t-%ID%', 'touch outside'),
  bash('cp README.md %O%/c-%ID%', 'cp outside'),
  bash('rm -rf ~/missing-%ID%', 'rm in home (of nothing)'),
  bash('touch .git/t-%ID%', 'touch in .git'),
  bash('touch .env', 'touch .env'),
  bash('sed -i s/x/y/ .bashrc', 'sed -i on a project .bashrc'),
  bash('chmod +x ~/.bashrc', 'chmod in home'),
  bash('mkdir .claude/d-%ID% && touch .claude/d-%ID%/x', 'compound into .claude'),
  bash('tar -cf a-%ID%.tar README.md', 'tar create'),
];
group('writes-acceptedits', {}, 'acceptEdits', WRITE_CANDIDATES);
group('writes-default', {}, 'default', WRITE_CANDIDATES);

// ── Fourth batch: a bare Bash allow next to path denies, ask rules on paths, critical-path rm ──────
// Under a bare `Bash` allow Claude Code runs nearly anything, so every command here is harmless.
group('bareallow', { permissions: { allow: ['Bash'], deny: ['Read(~/.ssh/**)', 'Read(./.env)', 'Edit(./docs/**)'] } }, 'default', [
  bash('cat ~/.ssh/id_rsa', 'Read deny beats a bare Bash allow'),
  bash('cat .env', 'Read deny beats a bare Bash allow'),
  bash('cat config/.env', 'at depth'),
  bash('cp ~/.ssh/id_rsa k-%ID%', 'cp of a denied file'),
  bash('echo x > docs/n-%ID%.md', 'redirect into an Edit-denied folder'),
  bash('touch docs/t-%ID%', 'touch in an Edit-denied folder'),
  bash('echo x > .git/hooks/h-%ID%', 'write into .git/hooks'),
  bash('echo x > .claude/c-%ID%', 'write into .claude/'),
  bash('echo x >> ~/.bashrc', 'append to ~/.bashrc'),
  bash('rm -rf src/..', 'rm of the project through .. (rm refuses)'),
  bash('rm -rf ./', 'rm of the project itself (rm refuses)'),
  bash('rm -rf /missing-top-%ID%', 'rm of a top-level path'),
  bash('rm -rf ~/missing-%ID%', 'rm in home'),
  bash('rm -rf "$HOME"/missing-%ID%', 'rm with a quoted $HOME'),
  bash('rm -rf /tmp/missing-%ID%', 'rm in /tmp'),
  bash('cat ~/.aws/credentials', 'no rule for ~/.aws'),
  bash('git status', 'ordinary'),
  bash('ls ~/.ssh', 'listing a denied folder'),
  bash('grep -r FAKE ~/.ssh', 'grep in a denied folder'),
  bash('find ~/.ssh -type f', 'find in a denied folder'),
  bash('tar -cf %O%/t-%ID%.tar -C ~ .ssh', 'tar of a denied folder'),
]);
group('pathask', { permissions: { ask: ['Read(./docs/**)', 'Edit(./src/**)'], allow: ['Bash(cat *)', 'Bash(ls *)', 'Bash(grep *)', 'Bash(touch *)', 'Read', 'Edit', 'Grep', 'Glob'] } }, 'default', [
  read(P('docs/guide.md'), 'Read ask rule beats a bare Read allow'),
  bash('cat docs/guide.md', 'cat under a Read ask rule'),
  grep('guide', P('docs'), 'Grep in an ask folder'),
  glob('*', P('docs'), 'Glob in an ask folder'),
  bash('grep -r guide docs', 'grep -r in an ask folder'),
  bash('ls docs', 'ls of an ask folder'),
  edit(P('src/index.ts'), 'export const a = 1;', 'Edit ask rule beats a bare Edit allow'),
  write(P('src/%ID%.ts'), 'Write under an Edit ask rule'),
  bash('touch src/t-%ID%', 'touch under an Edit ask rule'),
  read(P('README.md'), 'no ask rule'),
]);
group('pathask-bypass', { permissions: { ask: ['Read(./docs/**)', 'Edit(./src/**)'] } }, 'bypassPermissions', [
  read(P('docs/guide.md'), 'Read ask rule in bypass'),
  bash('cat docs/guide.md', 'cat under a Read ask rule in bypass'),
  edit(P('src/index.ts'), 'export const a = 1;', 'Edit ask rule in bypass'),
  bash('touch src/t-%ID%', 'touch under an Edit ask rule in bypass'),
  bash('echo x > src/e-%ID%', 'redirect under an Edit ask rule in bypass'),
]);
group('adddir-acceptedits', { permissions: { additionalDirectories: ['%O%'] } }, 'acceptEdits', [
  write(O('%ID%.txt'), 'acceptEdits in an added folder'),
  edit(O('data.txt'), 'outside data', 'acceptEdits edit in an added folder'),
  bash('touch %O%/t-%ID%', 'touch in an added folder'),
  bash('cat %O%/data.txt', 'cat in an added folder'),
  write(H('%ID%.txt'), 'acceptEdits in home (not added)'),
]);

// Here-documents: an unquoted one expands $( ) and $VAR in its text when the command runs.
const HEREDOCS: Call[] = [
  bash("git commit --allow-empty -m \"$(cat <<'EOF'\nmessage\nEOF\n)\"", 'quoted here-document in a commit message'),
  bash('git commit --allow-empty -m "$(cat <<EOF\nmessage\nEOF\n)"', 'unquoted here-document in a commit message'),
  bash('cat <<EOF\nhi\nEOF', 'unquoted here-document'),
  bash("cat <<'EOF'\nhi\nEOF", 'quoted here-document'),
  bash('cat <<"EOF"\nhi\nEOF', 'double-quoted delimiter'),
  bash('cat <<-EOF\n\thi\n\tEOF', '<<- here-document'),
  bash('cat <<EOF\n$(touch heredoc-%ID%)\nEOF', 'substitution inside an unquoted here-document'),
  bash("cat <<'EOF'\n$(touch heredoc-%ID%)\nEOF", 'substitution text inside a quoted here-document'),
  bash('cat <<< hi', 'here-string'),
  bash('python3 - <<EOF\nprint(1)\nEOF', 'here-document fed to python'),
  bash("cat <<'EOF' > here-%ID%.txt\nhi\nEOF", 'quoted here-document into a file'),
];
group('heredoc-allow', { permissions: { allow: ['Bash(git commit *)', 'Bash(cat *)', 'Bash(python3 *)'] } }, 'default', HEREDOCS);
group('heredoc-norules', {}, 'default', HEREDOCS);
group('heredoc-acceptedits', {}, 'acceptEdits', HEREDOCS);

// ── Fifth batch: more spellings of a read of a Read-denied file and of a write into an Edit-denied folder ──
const DENY_SPELLINGS_2: Call[] = [
  bash('source .env', 'source runs (and reads) it'),
  bash('. .env', '. runs it'),
  bash('grep -f .env README.md', 'grep -f reads patterns from it'),
  bash('diff .env README.md', 'diff reads it'),
  bash('cat .env 2>/dev/null', 'with a stderr redirect'),
  bash('cat -- .env', 'after --'),
  bash('cat .e""nv', 'empty quotes inside the name'),
  bash("cat '.e'nv", 'partly quoted name'),
  bash('cat .\\env', 'backslash in the name'),
  bash('cat $(echo .env)', 'name from a substitution'),
  bash('find . -name .env -exec cat {} \\;', 'find -exec cat'),
  bash('head -c 100 < .env', 'input redirect to head'),
  bash('while read l; do echo $l; done < .env', 'loop reading it'),
  bash('read x < .env', 'read builtin'),
  bash('dd if=.env status=none', 'dd if='),
  bash('strings .env', 'strings'),
  bash('sort .env', 'sort'),
  bash('xargs -a .env echo', 'xargs -a'),
  bash('git diff --no-index .env README.md', 'git diff --no-index'),
  bash('tar -cf - .env', 'tar to stdout'),
  bash('cp src/index.ts src/copy-%ID%.ts', 'cp inside a denied folder'),
  bash('mv src/index.ts src/index.ts', 'mv onto itself in a denied folder'),
  bash('install -m 644 README.md src/i-%ID%', 'install into a denied folder'),
  bash('tar -cf %O%/a-%ID%.tar README.md && tar -xf %O%/a-%ID%.tar -C src', 'tar -x into a denied folder'),
  bash('git checkout -- src/index.ts', 'git checkout of a denied file'),
  bash('git restore src/index.ts', 'git restore of a denied file'),
  bash('truncate -s 0 src/t-%ID%', 'truncate in a denied folder'),
  bash('dd if=README.md of=src/d-%ID% status=none', 'dd of= into a denied folder'),
  bash('sed -i s/a/b/ src/index.ts', 'sed -i on a denied file'),
  bash("perl -pi -e 's/a/b/' src/index.ts", 'perl -pi on a denied file'),
  bash("python3 -c \"open('src/p-%ID%','w').write('x')\"", 'python writes into a denied folder'),
  bash("node -e \"require('fs').writeFileSync('src/n-%ID%','x')\"", 'node writes into a denied folder'),
  bash(': > src/c-%ID%', 'bare redirect with :'),
  bash('> src/r-%ID%', 'bare redirect'),
  bash('echo x | tee -a src/t2-%ID%', 'tee -a into a denied folder'),
  bash('cd src && touch t3-%ID%', 'cd into a denied folder then touch'),
  bash('cd src && echo x > e-%ID%', 'cd into a denied folder then redirect'),
  bash('ln -sf ../README.md src/index.ts', 'ln -sf over a denied file'),
  bash('chmod 600 src/index.ts', 'chmod of a denied file'),
  bash('rm -f src/missing-%ID%', 'rm in a denied folder'),
];
group('denyspell2', { permissions: { allow: ['Bash'], deny: ['Read(./.env)', 'Edit(./src/**)'] } }, 'default', DENY_SPELLINGS_2);
group('denyspell2-acceptedits', { permissions: { deny: ['Read(./.env)', 'Edit(./src/**)'] } }, 'acceptEdits', DENY_SPELLINGS_2);
group('denyspell2-bypass', { permissions: { deny: ['Read(./.env)', 'Edit(./src/**)'] } }, 'bypassPermissions', DENY_SPELLINGS_2);

// ── Sixth batch: ask rules in dontAsk and plan, rule spellings, case, additional folders ──────────
const ASK_RULES: SettingsJson = { permissions: { ask: ['Bash(git push *)', 'Read(./docs/**)', 'Edit(./src/**)', 'mcp__fake__wipe', 'WebFetch(domain:example.com)'], allow: ['Bash(git *)', 'Read', 'Edit', 'mcp__fake', 'WebFetch'] } };
const ASK_CALLS: Call[] = [
  bash('git push', 'ask rule'),
  bash('git -C . push', 'ask rule through git -C'),
  bash('git status', 'allow rule'),
  read(P('docs/guide.md'), 'Read ask rule'),
  read(P('README.md'), 'Read allow'),
  edit(P('src/index.ts'), 'export const a = 1;', 'Edit ask rule'),
  write(P('src/%ID%.ts'), 'Write under an Edit ask rule'),
  edit(P('README.md'), '# scratch project', 'Edit allow'),
  fetchCall('https://example.com/', 'WebFetch ask rule'),
  fetchCall('https://example.org/', 'WebFetch allow'),
];
for (const mode of ['dontAsk', 'plan', 'acceptEdits'] as const) {
  group(`askrules-${mode}`, ASK_RULES, mode, ASK_CALLS);
  mcpGroup(`askrules-mcp-${mode}`, ASK_RULES, mode, MCP_BOTH);
}

group('rulespell', {
  permissions: {
    deny: ['Bash(git push:*)', 'Bash(rm -rf*)', 'Bash(*--force*)', 'Bash(curl  *)', 'Read(./.ENV)', 'Bash(Chmod *)', 'Edit(.env)', 'Read(src/*.ts)'],
    allow: ['Bash'],
  },
}, 'default', [
  bash('git push', 'legacy :* deny'),
  bash('git push origin main', 'legacy :* deny with arguments'),
  bash('git -C . push', 'legacy :* deny through git -C'),
  bash('rm -rf missing-dir', 'no-space * deny'),
  bash('rm -rfv missing-dir', 'no-space * deny, longer flag'),
  bash('rm -r -f missing-dir', 'respelled flags'),
  bash('git push --force', '* anywhere deny'),
  bash('git push --force-with-lease', '* anywhere deny, longer'),
  bash('curl http://127.0.0.1:9/', 'double space in the rule'),
  bash('cat .env', 'rule in upper case (.ENV)'),
  read(P('.env'), 'Read with the rule in upper case'),
  bash('chmod 644 README.md', 'program name in another case in the rule'),
  write(P('config/.env'), 'Edit(.env) bare name at depth'),
  edit(P('.env'), 'FAKE_SECRET', 'Edit(.env) at the root'),
  read(P('src/index.ts'), 'Read(src/*.ts) deny'),
  read(P('src/lib/util.ts'), 'Read(src/*.ts) and a deeper file'),
  bash('cat src/index.ts', 'cat under Read(src/*.ts)'),
  bash('cat src/lib/util.ts', 'cat of a deeper file'),
]);

group('adddir-forms', { permissions: { additionalDirectories: ['../outside', '~/.ssh'] } }, 'default', [
  read(O('data.txt'), 'added as ../outside'),
  bash('cat ../outside/data.txt', 'cat in a folder added as ../outside'),
  read(H('.ssh/id_rsa'), 'added as ~/.ssh'),
  bash('cat ~/.ssh/id_rsa', 'cat in a folder added as ~/.ssh'),
  write(O('%ID%.txt'), 'write in an added folder (default mode)'),
  read(H('notes.txt'), 'home itself not added'),
]);

// ── Seventh batch: file tools with unusual paths and patterns ────────────────────────────────────
const FILE_TOOL_PATHS: Call[] = [
  glob('../outside/*', undefined, 'Glob pattern climbing out'),
  glob('/etc/host*', undefined, 'absolute Glob pattern'),
  glob('*', P('link-to-ssh'), 'Glob through a symlinked folder'),
  ['Grep', { pattern: 'FAKE', path: P(''), glob: '.env' }, 'Grep limited to .env by its glob'],
  ['Grep', { pattern: 'FAKE', path: P('link-to-key') }, 'Grep of a symlink to a key'],
  ['Grep', { pattern: 'FAKE', path: P('config'), output_mode: 'content' }, 'Grep in a folder holding .env'],
  read('~/.ssh/id_rsa', 'Read with ~ in file_path'),
  read(P('./src/../../outside/data.txt'), 'Read climbing out with ..'),
  read(P('src//index.ts'), 'double slash'),
  read('/proc/self/environ', 'environment through /proc'),
  read(P('.git/config'), 'Read of .git/config'),
  write(P('../outside/%ID%.txt'), 'Write climbing out with ..'),
  write(P('link-to-ssh/%ID%'), 'Write through a symlinked folder into ~/.ssh'),
  edit(P('link-to-ssh/config'), 'Host fake', 'Edit through a symlinked folder into ~/.ssh'),
  edit(P('.git/config'), '[core]', 'Edit of .git/config'),
  write(P('src/./%ID%.ts'), 'Write with /./'),
];
group('filepaths-default', {}, 'default', FILE_TOOL_PATHS);
group('filepaths-acceptedits', {}, 'acceptEdits', FILE_TOOL_PATHS);
group('filepaths-allow', { permissions: { allow: ['Read', 'Edit', 'Write', 'Glob', 'Grep'], deny: ['Read(./.env)', 'Read(~/.ssh/**)'] } }, 'default', FILE_TOOL_PATHS);

// Links made for these cases only (a group of their own): names that hide where they point.
group('extra-links', { permissions: { allow: ['Bash(cat *)', 'Read(./**)'], deny: ['Read(~/.aws/**)'] } }, 'default', [
  bash('cat notes.txt', 'an innocent name linked to ~/.aws/credentials'),
  read(P('notes.txt'), 'Read of that link'),
  bash('cat docs/readme-copy.md', 'a link inside docs/ to the outside folder'),
  read(P('docs/readme-copy.md'), 'Read of that link'),
  bash('cat chain', 'a link to a link to ~/.aws/credentials'),
], [
  { path: '%P%/notes.txt', link: '%H%/.aws/credentials' },
  { path: '%P%/docs/readme-copy.md', link: '%O%/data.txt' },
  { path: '%P%/chain', link: '%P%/notes.txt' },
]);

// ── Eighth batch: environment assignments that change what an allowed command runs, outside reads ──
const ENV_FORMS: Call[] = [
  bash('NODE_ENV=test npm test', 'a harmless variable before an allowed command'),
  bash('FOO=1 ls', 'an unknown variable before a read-only command'),
  bash('LD_PRELOAD=/nonexistent-%ID%.so ls', 'LD_PRELOAD'),
  bash('PATH=/nonexistent-%ID% ls', 'PATH'),
  bash('GIT_DIR=%O%/other-repo/.git git status', 'GIT_DIR to another repository'),
  bash('GIT_CONFIG_PARAMETERS="\'core.pager=touch pager-%ID%\'" git log -1', 'GIT_CONFIG_PARAMETERS'),
  bash('PAGER="touch pager-%ID%" git log -1', 'PAGER runs a program'),
  bash('GIT_PAGER="touch pager-%ID%" git log -1', 'GIT_PAGER runs a program'),
  bash('GIT_EXTERNAL_DIFF="touch diff-%ID%" git diff', 'GIT_EXTERNAL_DIFF'),
  bash('BASH_ENV=/nonexistent-%ID% bash -c true', 'BASH_ENV'),
  bash('env FOO=1 git status', 'env with an assignment'),
  bash('env -u HOME git status', 'env -u'),
  bash('export PAGER=cat; git log -1', 'export then an allowed command'),
  bash('LANG=C git status', 'LANG before git'),
  bash('head ~/.bashrc', 'head in home'),
  bash('wc -c ~/.ssh/id_rsa', 'wc of a key'),
  bash('diff ~/.bashrc README.md', 'diff with a home file'),
  bash('ls /', 'listing the root'),
  bash('ls ..', 'listing the parent'),
  bash('grep scratch /etc/hostname', 'grep of a system file'),
];
group('envforms-allow', { permissions: { allow: ['Bash(git *)', 'Bash(ls *)', 'Bash(npm test *)', 'Bash(bash *)', 'Bash(head *)', 'Bash(wc *)', 'Bash(diff *)', 'Bash(grep *)'] } }, 'default', ENV_FORMS);
group('envforms-norules', {}, 'default', ENV_FORMS);
group('envforms-acceptedits', {}, 'acceptEdits', ENV_FORMS);

// ── Ninth batch: settings keys that change the mode, and bare ask rules ──────────────────────────
const MODE_PROBES: Call[] = [
  bash('touch marker-%ID%', 'a write'),
  bash('rm -rf missing-dir', 'a deletion'),
  write(P('out/%ID%.txt'), 'a new file'),
  read(H('.ssh/id_rsa'), 'a read outside'),
];
group('settings-nobypass', { permissions: { disableBypassPermissionsMode: 'disable' } }, 'bypassPermissions', MODE_PROBES);
group('settings-defaultmode-plan', { permissions: { defaultMode: 'plan' } }, 'default', MODE_PROBES);
group('settings-defaultmode-bypass', { permissions: { defaultMode: 'bypassPermissions' } }, 'default', MODE_PROBES);
group('settings-bareask-bypass', { permissions: { ask: ['Bash', 'Write'] } }, 'bypassPermissions', MODE_PROBES);
group('settings-bareask-acceptedits', { permissions: { ask: ['Write'] } }, 'acceptEdits', MODE_PROBES);

// ── Tenth batch: command hooks (they only echo a decision) never weaken deny and ask rules ────────
const hookSaying = (matcher: string, decision: 'allow' | 'deny' | 'ask') => ({
  PreToolUse: [{ matcher, hooks: [{ type: 'command', command: `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"${decision}","permissionDecisionReason":"differential hook"}}'` }] }],
});
group('hooks-allow', { permissions: { deny: ['Bash(rm *)', 'Read(./.env)'], ask: ['Bash(git push *)'] }, hooks: hookSaying('Bash', 'allow') }, 'default', [
  bash('rm -rf missing-dir', 'hook allow vs a deny rule'),
  bash('git push', 'hook allow vs an ask rule'),
  bash('touch marker-%ID%', 'hook allow, no rule'),
  bash('cat .env', 'hook allow vs a Read deny'),
  bash('cat ~/.ssh/id_rsa', 'hook allow, a read outside'),
]);
group('hooks-deny', { permissions: { allow: ['Read', 'Bash(cat *)'] }, hooks: hookSaying('Read', 'deny') }, 'default', [
  read(P('README.md'), 'hook deny vs an allow rule'),
  bash('cat README.md', 'the hook only matches Read'),
]);
group('hooks-ask', { permissions: { allow: ['Bash(touch *)'], deny: ['Bash(rm *)'] }, hooks: hookSaying('Bash', 'ask') }, 'default', [
  bash('touch marker-%ID%', 'hook ask vs an allow rule'),
  bash('rm -rf missing-dir', 'hook ask vs a deny rule'),
]);
group('hooks-allow-bypass', { permissions: { ask: ['Bash(git push *)'] }, hooks: hookSaying('Bash', 'allow') }, 'bypassPermissions', [
  bash('git push', 'hook allow vs an ask rule in bypass'),
]);

// ── Eleventh batch: the same command sets in the modes they were not yet run in ──────────────────
group('sneaky-plan', {}, 'plan', SNEAKY);
group('sneaky-dontask', {}, 'dontAsk', SNEAKY);
group('readonly-dontask', {}, 'dontAsk', readOnlyCalls);
group('writes-plan', {}, 'plan', WRITE_CANDIDATES);
group('writes-dontask', {}, 'dontAsk', WRITE_CANDIDATES);
group('heredoc-dontask', {}, 'dontAsk', HEREDOCS);

/** Every case, with %ID% replaced by the case's id. */
export const DIFFERENTIAL_CASES: readonly DifferentialCase[] = cases.map((c) => ({ ...c, input: withId(c.input, c.id) }));

function withId(value: Record<string, unknown>, id: string): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value).replaceAll('%ID%', id)) as Record<string, unknown>;
}
