// Lint: typed rules (floating promises matter in a server full of async cluster calls) and layer boundaries.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '.next/**',
      'node_modules/**',
      'docs/**',
      'test-results/**',
      'playwright-report/**',
      'next-env.d.ts',
      '*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['bin/*.mjs'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // The plain-JS launcher runs on whatever Node npm found; it only needs Node's globals.
    files: ['bin/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  {
    // The embedded cluster is on the far side of HTTP: nothing in Corral's server may import it.
    files: ['src/server/**/*.ts', 'src/proxmox/**/*.ts', 'src/app/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@/sim/*', '**/sim/*'], message: 'src/sim is a separate program; talk to it over HTTP.' },
          ],
        },
      ],
    },
  },
  {
    // Domain code takes a cluster interface; it never imports tRPC, Next or the Kubernetes client.
    files: ['src/server/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@trpc/*', 'next', 'next/*', '@kubernetes/client-node'],
              message: 'domain/ is framework-free; use the cluster interface.',
            },
            { group: ['@/sim/*', '**/sim/*'], message: 'src/sim is a separate program.' },
          ],
        },
      ],
    },
  },
);
