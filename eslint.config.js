// Lint configuration: typescript-eslint's recommended type-aware rules over the whole tree.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const PROCESS_DIRS = ['controller', 'webhook', 'cli'];
/** Plumbing of shared/: the API client, informers, queue, leader election, the log. Everything else in shared/ is pure. */
const SHARED_PLUMBING = ['shared/kube/**', 'shared/log.ts'];
/**
 * Pure code: decisions as functions of their inputs and `now` (docs/architecture.md). The pure
 * modules of shared/, the admission rules and the plan engine; each area may import only
 * itself, pure shared/ code and types.
 */
const PURE_AREAS = [
  { files: ['shared/**/*.ts'], ignores: SHARED_PLUMBING, process: undefined, shell: [] },
  // The webhook's shell (handlers, lookups, server, caches) is webhook/*.ts.
  { files: ['webhook/rules/**/*.ts'], process: 'webhook', shell: ['../*.ts'] },
  // The controller's shell (reconcilers, executors, main) is everything in controller/ but engine/.
  { files: ['controller/engine/**/*.ts'], process: 'controller', shell: ['../*.ts', '../*/**', '!../../**'] },
  // The Instance controller's decision and pass (its shell: reconciler.ts, statusWrite.ts).
  {
    files: ['controller/instances/decide.ts', 'controller/instances/pass.ts'],
    process: 'controller',
    shell: ['../*.ts', './reconciler.ts', './statusWrite.ts', '../executors/**', '../updates/**', '../fleet/**', '../certs/**'],
  },
  // The updates controller's passes (their shell: worker.ts, and the compositions with a query loop).
  {
    files: ['controller/updates/pass.ts'],
    process: 'controller',
    shell: [
      '../*.ts',
      './worker.ts',
      './reconciler.ts',
      './upgrades.ts',
      './client.ts',
      './controller.ts',
      './legacyReservations.ts',
      '../instances/**',
      '../executors/**',
      '../fleet/**',
      '../certs/**',
    ],
  },
];
const IO_MODULES = [
  'http',
  'https',
  'http2',
  'fs',
  'fs/promises',
  'net',
  'tls',
  'dns',
  'dgram',
  'child_process',
  'worker_threads',
  'cluster',
].flatMap((m) => [`node:${m}`, m]);
const IO_PACKAGES = ['pino', 'express', '@kubernetes/client-node', 'prom-client', 'node-forge', 'raw-body'];
/** What does I/O or reads the clock or the process without being imported. */
const IMPURE_GLOBALS = ['setTimeout', 'setInterval', 'setImmediate', 'process', 'fetch', 'performance'];

/** One no-restricted-imports block per process folder and for shared/; pure code imports no I/O. */
function layering() {
  const folder = (d) => ({ group: [`**/${d}/**`], message: `${d}/ is another process: move what both need to shared/` });
  const pure = 'pure code does no I/O and reads no clock (docs/architecture.md): take what it needs as arguments';
  return [
    ...PROCESS_DIRS.map((dir) => ({
      files: [`${dir}/**/*.ts`],
      rules: { 'no-restricted-imports': ['error', { patterns: PROCESS_DIRS.filter((d) => d !== dir).map(folder) }] },
    })),
    {
      files: SHARED_PLUMBING,
      rules: { 'no-restricted-imports': ['error', { patterns: PROCESS_DIRS.map(folder) }] },
    },
    ...PURE_AREAS.map(({ files, ignores, process, shell }) => ({
      files,
      ...(ignores ? { ignores } : {}),
      rules: {
        'no-restricted-imports': [
          'error',
          {
            paths: [...IO_MODULES, ...IO_PACKAGES].map((name) => ({ name, message: pure })),
            patterns: [
              ...PROCESS_DIRS.filter((d) => d !== process).map(folder),
              // Types from the plumbing (an AccessAnswer, a Logger) are data; its functions are not.
              {
                group: ['**/kube/**', '**/log.ts'],
                allowTypeImports: true,
                message: `${pure}: shared/kube and shared/log.ts are plumbing`,
              },
              ...(shell.length > 0
                ? [
                    {
                      group: shell,
                      allowTypeImports: true,
                      message: `${pure}: the ${process}'s shell asks, the pure code judges the answers`,
                    },
                  ]
                : []),
            ],
          },
        ],
        'no-restricted-globals': ['error', ...IMPURE_GLOBALS.map((name) => ({ name, message: pure }))],
        'no-restricted-properties': ['error', { object: 'Date', property: 'now', message: pure }],
        'no-restricted-syntax': ['error', { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: pure }],
      },
    })),
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
  // another; shared/ imports none of them; pure code (shared/ but its plumbing, webhook/rules,
  // controller/engine, controller/instances' decide and pass, controller/updates/pass.ts) does no I/O.
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
