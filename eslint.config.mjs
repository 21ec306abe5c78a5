import tseslint from 'typescript-eslint'
import hostileRealm from './lint/hostile-realm.mjs'

/** Code that runs in a program's realm, or validates what a program produced there. */
export const REALM_FILES = ['src/worker/**/*.ts', 'src/json/**/*.ts', 'src/transform/hooks.ts', 'src/transform/position-map.ts', 'src/intrinsics.ts', 'src/frames.ts']

/** Syntax that iterates with the realm's `Array.prototype[Symbol.iterator]`, which a program may replace. */
const ITERATOR_SYNTAX = [
  { selector: 'ForOfStatement', message: 'for…of uses the array iterator, which a program may replace: loop by index.' },
  {
    selector: ':matches(ArrayExpression, CallExpression, NewExpression) > SpreadElement',
    message: 'Spread uses the array iterator, which a program may replace: copy by index.',
  },
  {
    selector: 'ArrayPattern',
    message: 'Array destructuring uses the array iterator, which a program may replace: read indices.',
  },
  { selector: 'YieldExpression[delegate=true]', message: 'yield* uses the iterator protocol, which a program may replace.' },
]

/** The hostile-realm rule (see lint/hostile-realm.mjs) for `files`. */
export function hostileRealmConfig(files) {
  return {
    files,
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'hostile-realm': hostileRealm },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      'no-restricted-syntax': ['error', ...ITERATOR_SYNTAX],
      'hostile-realm/captured-builtins': 'error',
    },
  }
}

export default tseslint.config(
  { ignores: ['dist/**', 'docs/**', 'coverage/**'] },
  hostileRealmConfig(REALM_FILES),
)
