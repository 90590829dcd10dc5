import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import noFixedSleep from './test/lint/no-fixed-sleep.js';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'web/dist/**', 'bench/peers*/**', 'coverage/**', '.sage/**', 'demo/sample-project/**', 'scratch/**', 'test-artifacts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  {
    // Tests wait for what they wait for, never a fixed time (test/lint/no-fixed-sleep.js says why).
    files: ['src/**/*.test.ts', 'src/**/test-support/**/*.ts', 'test/**/*.ts'],
    plugins: { sage: { rules: { 'no-fixed-sleep': noFixedSleep } } },
    rules: { 'sage/no-fixed-sleep': 'error' },
  },
);
