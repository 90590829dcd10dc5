/**
 * Grep's `type` filter: names as ripgrep spells them (and common aliases) to file extensions.
 * Both search paths use this one table (ripgrep through `--type-add`), so they agree exactly.
 */
export const GREP_FILE_TYPES: Readonly<Record<string, readonly string[]>> = {
  js: ['js', 'mjs', 'cjs', 'jsx'],
  ts: ['ts', 'tsx', 'mts', 'cts'],
  py: ['py', 'pyi'],
  rust: ['rs'],
  go: ['go'],
  java: ['java'],
  kotlin: ['kt', 'kts'],
  scala: ['scala', 'sc'],
  swift: ['swift'],
  c: ['c', 'h'],
  cpp: ['cpp', 'cc', 'cxx', 'c++', 'hpp', 'hh', 'hxx', 'h', 'inl'],
  cs: ['cs'],
  ruby: ['rb', 'gemspec', 'rake'],
  php: ['php'],
  lua: ['lua'],
  sh: ['sh', 'bash', 'zsh'],
  json: ['json', 'jsonc', 'json5'],
  yaml: ['yaml', 'yml'],
  toml: ['toml'],
  xml: ['xml', 'xsd', 'xsl'],
  html: ['html', 'htm'],
  css: ['css', 'scss', 'sass', 'less'],
  md: ['md', 'markdown', 'mdx'],
  sql: ['sql'],
  vue: ['vue'],
  svelte: ['svelte'],
  txt: ['txt'],
};

const ALIASES: Readonly<Record<string, string>> = {
  javascript: 'js',
  typescript: 'ts',
  python: 'py',
  rs: 'rust',
  golang: 'go',
  markdown: 'md',
  rb: 'ruby',
  csharp: 'cs',
  shell: 'sh',
  yml: 'yaml',
};

/** The extensions of a type name, or undefined for a type we do not know. */
export function extensionsOfType(type: string): readonly string[] | undefined {
  const key = type.toLowerCase();
  return GREP_FILE_TYPES[ALIASES[key] ?? key];
}
