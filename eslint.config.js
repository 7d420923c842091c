// Lint configuration: typescript-eslint's recommended type-aware rules over the whole tree.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const PROCESS_DIRS = ['controller', 'webhook', 'cli'];
const PURE_SHARED = ['shared/api/**', 'shared/blueprint/**', 'shared/plan/**', 'shared/conditions/**', 'shared/insights.ts', 'shared/text.ts', 'shared/refusal.ts', 'shared/reservations.ts'];
const IO_MODULES = ['node:http', 'node:https', 'node:fs', 'node:fs/promises', 'node:net', 'node:child_process', 'pino', 'express', '@kubernetes/client-node'];

/** One no-restricted-imports block per process folder and for shared/. */
function layering() {
  const folder = (d) => ({ group: [`**/${d}/**`], message: `${d}/ is another process: move what both need to shared/` });
  return [
    ...PROCESS_DIRS.map((dir) => ({
      files: [`${dir}/**/*.ts`],
      rules: { 'no-restricted-imports': ['error', { patterns: PROCESS_DIRS.filter((d) => d !== dir).map(folder) }] },
    })),
    {
      files: ['shared/**/*.ts'],
      ignores: PURE_SHARED,
      rules: { 'no-restricted-imports': ['error', { patterns: PROCESS_DIRS.map(folder) }] },
    },
    {
      files: PURE_SHARED,
      rules: {
        'no-restricted-imports': [
          'error',
          {
            paths: IO_MODULES.map((name) => ({ name, message: 'a pure module of shared/ does no I/O (docs/architecture.md)' })),
            patterns: [
              ...PROCESS_DIRS.map(folder),
              { group: ['**/kube/**', '**/log.ts'], message: 'a pure module of shared/ does no I/O: shared/kube and shared/log.ts are plumbing' },
            ],
          },
        ],
      },
    },
  ];
}

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.planwarden/', 'test/controlplane/**/*.go', 'bench/results.json'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['*.js', 'bin/*.js'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/require-await': 'off',
      'no-console': 'off',
    },
  },
  // The architecture's import directions (docs/architecture.md): no process folder imports
  // another; shared/ imports none of them; the pure modules of shared/ do no I/O.
  ...layering(),
  {
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-expressions': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
    },
  },
);
