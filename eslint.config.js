// Lint keeps the rooms apart (VS Code-style layering by runtime) and catches what tsc does not.
import tseslint from 'typescript-eslint';
import vue from 'eslint-plugin-vue';

const nodeBuiltins = { regex: '^node:', message: 'The renderer runs in a browser: no Node built-ins.' };

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'native/rdp/build/**', '**/*.d.ts'] },
  ...tseslint.configs.recommended,
  ...vue.configs['flat/recommended'],
  {
    files: ['**/*.vue'],
    languageOptions: { parserOptions: { parser: tseslint.parser, extraFileExtensions: ['.vue'] } },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      'vue/multi-word-component-names': 'off',
      'vue/max-attributes-per-line': 'off',
      'vue/singleline-html-element-content-newline': 'off',
      'vue/html-self-closing': 'off',
    },
  },
  {
    // The contract is shared by every runtime: it may import zod and itself, nothing else.
    files: ['src-main/common/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^(?!zod$|\\.)', message: 'src-main/common imports only zod.' }] }],
    },
  },
  {
    // Services run in plain Node (tests, `wraith serve`): never Electron, never a host.
    files: ['src-main/node/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'src-main/node runs without Electron; inject what you need from src-main/electron.' }],
          patterns: [{ regex: '/(electron|server)/', message: 'Services do not import hosts.' }],
        },
      ],
    },
  },
  {
    // The renderer talks to the services only through the contract.
    files: ['src-renderer/**/*.{ts,vue}'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'The renderer reaches Electron only through the preload (window.wraith).' }],
          patterns: [
            { regex: 'src-main/(?!common/)', message: 'The renderer may import only src-main/common.' },
            nodeBuiltins,
          ],
        },
      ],
    },
  },
);
