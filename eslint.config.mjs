import tseslint from 'typescript-eslint'
import hostileRealm from './lint/hostile-realm.mjs'

/** Code that runs in a program's realm, or validates what a program produced there. */
export const REALM_FILES = ['src/worker/**/*.ts', 'src/json/**/*.ts', 'src/transform/hooks.ts', 'src/transform/position-map.ts', 'src/intrinsics.ts', 'src/protocol/frames.ts']

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

/**
 * The layers of `src/` and what each may import of ours (ARCHITECTURE.md, "The layers"): the seam
 * nothing, the realm code and the protocol only what both sides share, the helper and what it shares
 * with the host (`system`) nothing of the host. Folders not listed (the host, Python, the CLI) may
 * import any layer.
 */
export const LAYERS = {
  seam: [],
  json: ['seam', 'intrinsics'],
  transform: ['seam', 'intrinsics'],
  protocol: ['seam', 'json', 'transform', 'intrinsics'],
  worker: ['seam', 'json', 'transform', 'protocol', 'intrinsics'],
  system: ['protocol'],
  helper: ['seam', 'json', 'protocol', 'system', 'worker', 'intrinsics'],
  tools: ['seam', 'json', 'transform'],
  mcp: ['seam', 'json', 'tools'],
  ai: ['seam', 'json', 'tools'],
}

/** `no-restricted-imports` for one layer: a relative import leaving the folder must name an allowed layer. */
function layerConfig(layer, allowed) {
  const names = allowed.map((name) => `${name}(/|\\.js$)`).join('|')
  const regex = allowed.length === 0 ? '^\\.\\./' : `^\\.\\./(?!(${names}))`
  const message = `src/${layer}/ may import ${allowed.length === 0 ? 'nothing of ours outside itself' : `only ${allowed.join(', ')} of ours`} (ARCHITECTURE.md, "The layers").`
  return { files: [`src/${layer}/**/*.ts`], rules: { 'no-restricted-imports': ['error', { patterns: [{ regex, message }] }] } }
}

export default tseslint.config(
  { ignores: ['dist/**', 'docs/**', 'coverage/**'] },
  { files: ['src/**/*.ts'], languageOptions: { parser: tseslint.parser } },
  ...Object.entries(LAYERS).map(([layer, allowed]) => layerConfig(layer, allowed)),
  hostileRealmConfig(REALM_FILES),
)
