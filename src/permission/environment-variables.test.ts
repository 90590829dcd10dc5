/**
 * Variables that change which program runs or what it loads (`PATH`, `LD_PRELOAD`, `GIT_CONFIG_*`,
 * `BASH_ENV`, `NODE_OPTIONS`…) make a command HIGH risk, and no allow rule, hook or default covers
 * it, however the shell is told to set them: a prefix, `env`, `export`, `printf -v`. Other
 * variables are decided as before.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPermissionEngine } from './engine.js';
import type { PermissionMode } from './modes.js';
import { changesWhatRuns } from './environment-variables.js';
import { gateCall, gateContext, tempWorkspace } from './test-support/test-fixtures.js';

let base: string;
let project: string;
let home: string;

beforeAll(() => {
  ({ base, project, home } = tempWorkspace());
  mkdirSync(project, { recursive: true });
  mkdirSync(home, { recursive: true });
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

async function decide(command: string, allow: string[] = [], mode: PermissionMode = 'default') {
  const engine = createPermissionEngine({ home, projectRoot: project, mode, caseInsensitiveFs: false, rules: allow.map((rule) => ({ rule, behavior: 'allow' as const, source: 'test' })) });
  return engine.decide(gateCall('Bash', { command }), gateContext(project));
}

const EVERYTHING = ['Bash(*)', 'Bash(ls *)', 'Bash(env *)', 'Bash(export *)', 'Bash(printf *)', 'Bash(git *)', 'Bash(npm test *)', 'Bash(read *)', 'Bash(cat *)'];

describe('a command that sets a variable changing what runs asks at HIGH risk, whatever the allow rules say', () => {
  it.each([
    ['a prefix', 'PATH=/tmp/evil ls', 'PATH'],
    ['a prefix in lower case', 'path=/tmp/evil ls', 'path'],
    ['an appending prefix', 'PATH+=:/tmp/evil ls', 'PATH'],
    ['a quoted value', 'PATH="/tmp/e v" ls', 'PATH'],
    ['a preload', 'LD_PRELOAD=/tmp/x.so ls', 'LD_PRELOAD'],
    ['macOS\'s loader', 'DYLD_INSERT_LIBRARIES=/tmp/x.dylib ls', 'DYLD_INSERT_LIBRARIES'],
    ['git configuration from the environment', 'GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=touch git status', 'GIT_CONFIG_COUNT'],
    ['a shell start-up file', 'BASH_ENV=/tmp/x bash -c ls', 'BASH_ENV'],
    ['node options', 'NODE_OPTIONS=--require=/tmp/x.js npm test', 'NODE_OPTIONS'],
    ['python\'s path', 'PYTHONPATH=/tmp/x python3 -m pytest', 'PYTHONPATH'],
    ['perl options', 'PERL5OPT=-Mevil perl x.pl', 'PERL5OPT'],
    ['ruby options', 'RUBYOPT=-revil ruby x.rb', 'RUBYOPT'],
    ['IFS', 'IFS=/ ls', 'IFS'],
    ['the env wrapper', 'env PATH=/tmp/evil ls', 'PATH'],
    ['env -i', 'env -i PATH=/tmp/evil ls', 'PATH'],
    ['env with -u before', 'env -u HOME LD_PRELOAD=/tmp/x.so ls', 'LD_PRELOAD'],
    ['env inside another wrapper', 'nohup env GIT_SSH_COMMAND=/tmp/x git fetch', 'GIT_SSH_COMMAND'],
    ['env -S', "env -S 'PATH=/tmp/evil ls'", 'PATH'],
    ['env -S in the same word', "env -S'PATH=/tmp/evil ls'", 'PATH'],
    ['env --split-string=', "env --split-string='LD_PRELOAD=/tmp/x.so ls'", 'LD_PRELOAD'],
    ['mapfile', 'mapfile -t PATH < dirs.txt; ls', 'PATH'],
    ['a bare assignment', 'PATH=/tmp/evil; ls', 'PATH'],
    ['after the time keyword', 'time PATH=/tmp/evil ls', 'PATH'],
    ['in a pipeline', 'ls | PATH=/tmp/evil cat', 'PATH'],
    ['mixed case', 'Path=/tmp/evil ls', 'Path'],
    ['an array element', 'PATH[0]=/tmp/evil ls', 'PATH'],
    ['env by its path', '/usr/bin/env PATH=/tmp/evil ls', 'PATH'],
    ['export in a chained command', 'export PATH=/tmp/evil && ls', 'PATH'],
    ['export after ;', 'export LD_PRELOAD=/tmp/x.so; ls', 'LD_PRELOAD'],
    ['declare -x', 'declare -x PATH=/tmp/evil; ls', 'PATH'],
    ['printf -v', 'printf -v PATH /tmp/evil; ls', 'PATH'],
    ['printf -v, attached', 'printf -vPATH %s /tmp/evil && ls', 'PATH'],
    ['read', 'read -r PATH <<< /tmp/evil; ls', 'PATH'],
    ['a home with its own .gitconfig', 'HOME=/tmp/evil git status', 'HOME'],
    ['a bash -c script', "bash -c 'PATH=/tmp/evil ls'", 'PATH'],
    ['a for loop variable', 'for PATH in /tmp/evil; do ls; done', 'PATH'],
    ['a select variable', 'select PATH in /tmp/evil; do ls; done', 'PATH'],
    ['let', 'let PATH=1; ls', 'PATH'],
    ['getopts storing an option letter', 'getopts a PATH -a; ls', 'PATH'],
    ['an exported bash function through env', "env 'BASH_FUNC_ls%%=() { id; }' bash -c ls", 'BASH_FUNC_ls%%'],
    ['env -a before the assignment', 'env -a x PATH=/tmp/evil ls', 'PATH'],
    ['BSD env -P', 'env -P /tmp/evil ls', 'PATH'],
    ['an OpenSSL config that loads an engine', 'OPENSSL_CONF=/tmp/x.cnf curl https://example.com', 'OPENSSL_CONF'],
    ['extra makefiles', 'MAKEFILES=/tmp/evil.mk make', 'MAKEFILES'],
    ['vim start-up commands', "VIMINIT=':!id' vim x", 'VIMINIT'],
    ['rsync\'s remote shell', 'RSYNC_RSH=/tmp/evil rsync a b:c', 'RSYNC_RSH'],
    ['man\'s options', "MANOPT='-P /tmp/evil' man ls", 'MANOPT'],
    ['an rc file', 'PSQLRC=/tmp/x psql', 'PSQLRC'],
    ['GTK modules', 'GTK_MODULES=/tmp/x.so ls', 'GTK_MODULES'],
    ['a compiler prefix', 'CCACHE_PREFIX=/tmp/evil make', 'CCACHE_PREFIX'],
  ])('%s: %s', async (_name, command, variable) => {
    const decision = await decide(command, EVERYTHING);
    expect(decision).toMatchObject({ behavior: 'ask' });
    expect(decision.risk === 'HIGH' || decision.risk === 'UNKNOWN').toBe(true);
    expect(decision.reason).toContain(variable);
    expect(decision.suggestions ?? []).toEqual([]);
  });

  it('is HIGH, not unknown, when nothing else is wrong with the command', async () => {
    expect(await decide('PATH=/tmp/evil ls', ['Bash(*)'])).toMatchObject({ behavior: 'ask', risk: 'HIGH' });
    expect(await decide('GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=touch git status')).toMatchObject({ behavior: 'ask', risk: 'HIGH' });
  });

  it('dontAsk refuses it; acceptEdits and plan do not run it', async () => {
    expect(await decide('PATH=/tmp/evil ls', ['Bash(*)'], 'dontAsk')).toMatchObject({ behavior: 'deny' });
    expect(await decide('PATH=/tmp/evil touch a.txt', [], 'acceptEdits')).toMatchObject({ behavior: 'ask' });
    expect(await decide('PATH=/tmp/evil ls', [], 'plan')).toMatchObject({ behavior: 'deny' });
  });

  it('env -C runs the command in another folder, so its paths are not judged from this one', async () => {
    expect(await decide('env -C /etc cat shadow', ['Bash(env *)', 'Bash(cat *)'])).toMatchObject({ behavior: 'ask' });
    expect(await decide('env --chdir=/etc cat shadow', ['Bash(env *)', 'Bash(cat *)'])).toMatchObject({ behavior: 'ask' });
  });
});

describe('a variable that does not change what runs is decided as before', () => {
  it.each([
    ['CI=true ls', [], 'allow'],
    ['NO_COLOR=1 ls', [], 'allow'],
    ['LC_ALL=C ls', [], 'allow'],
    ['CI=true npm test', ['Bash(npm test *)'], 'allow'],
    ['FOO=1 npm test', ['Bash(*)'], 'allow'],
    ['FOO=1 ls', [], 'ask'],
    ['FOO=1 ls', ['Bash(ls *)'], 'ask'],
    ['env FOO=1 ls', ['Bash(env *)', 'Bash(ls *)'], 'allow'],
    ['export FOO=1 && ls', ['Bash(export *)', 'Bash(ls *)'], 'ask'],
    ['printf %s hello', [], 'allow'],
    ['env -i ls', ['Bash(env *)', 'Bash(ls *)'], 'allow'],
    ['for i in 1 2; do ls; done', [], 'allow'],
    ['getopts ab opt', ['Bash(getopts *)'], 'allow'],
  ] as const)('%s with %j: %s', async (command, allow, behavior) => {
    const decision = await decide(command, [...allow]);
    expect(decision.behavior).toBe(behavior);
    if (behavior === 'ask') expect(decision.risk).not.toBe('HIGH');
  });
});

describe('changesWhatRuns', () => {
  it('names the variables that choose or load a program, in any case', () => {
    for (const name of ['PATH', 'path', 'LD_LIBRARY_PATH', 'ld_preload', 'DYLD_LIBRARY_PATH', 'GIT_DIR', 'GIT_EXEC_PATH', 'BASH_ENV', 'ENV', 'NODE_OPTIONS', 'NODE_PATH', 'PYTHONSTARTUP', 'PYTHONHOME', 'PERL5LIB', 'PERLLIB', 'RUBYLIB', 'IFS', 'CDPATH', 'PROMPT_COMMAND', 'PS4', 'SHELLOPTS', 'BASHOPTS', 'HOME', 'XDG_CONFIG_HOME', 'ZDOTDIR', 'EDITOR', 'PAGER', 'LESSOPEN', 'SSH_ASKPASS', 'JAVA_TOOL_OPTIONS', 'CLASSPATH', 'GCONV_PATH', 'GLIBC_TUNABLES', 'NPM_CONFIG_SCRIPT_SHELL', 'npm_config_node_options', 'RUSTC_WRAPPER', 'CARGO_HOME', 'GOFLAGS', 'GOTOOLCHAIN', 'MAKEFLAGS', 'CC', 'LUA_INIT', 'PHPRC', 'KUBECONFIG', 'DOCKER_CONFIG']) {
      expect([name, changesWhatRuns(name)]).toEqual([name, true]);
    }
  });

  it('leaves plain settings alone', () => {
    for (const name of ['FOO', 'CI', 'NO_COLOR', 'FORCE_COLOR', 'NODE_ENV', 'LANG', 'LC_ALL', 'TZ', 'DEBUG', 'TERM', 'COLUMNS', 'GREETING', 'PYTHONUNBUFFERED', 'RUST_BACKTRACE']) {
      expect([name, changesWhatRuns(name)]).toEqual([name, false]);
    }
  });
});
