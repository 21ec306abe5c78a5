/**
 * Transformer fuzzing. Programs are built from a grammar of declarations (var, let, const,
 * functions, classes, array and object destructuring with defaults, holes and rest), loops
 * (for, for-in, for-of, for await, while, do-while, labelled breaks), blocks, branches, switch
 * and try. Each generated choice list is rendered twice: without `await`, and with `await`
 * inserted at chosen expression positions. Two differential properties, for `script` and `repl`:
 *
 * - without await, the lowered program gives the completion value and the top-level bindings
 *   `vm.Script` gives on a fresh context (or fails with the same error);
 * - with await, it gives the same completion as the await-free rendering under `vm.Script`
 *   (awaiting a non-thenable yields the value itself) and the same bindings as the program run
 *   as the body of an async function (or fails with the same error).
 *
 * `npm test` runs a small budget; `PTC_FUZZ_RUNS=20000 npx vitest run test/transform/fuzz`
 * runs a long campaign (the count applies to each property).
 */
import vm from 'node:vm'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { type Outcome, asScript, describeError, lowered, readAll } from './outcomes.js'

const RUNS = Number(process.env.PTC_FUZZ_RUNS ?? 75)
const TIMEOUT_MS = Math.max(30_000, RUNS * 50)

/** One generated statement: a template and the numbers and flags that fill it in. */
interface Choice {
  kind: number
  a: number
  b: number
  c: number
  /** Whether the await rendering awaits the first awaitable position of this statement. */
  awaited: boolean
}

const TEMPLATES = 22

const choice: fc.Arbitrary<Choice> = fc.record({
  kind: fc.nat(TEMPLATES - 1),
  a: fc.nat(99),
  b: fc.nat(99),
  c: fc.nat(99),
  awaited: fc.boolean(),
})

/** What a rendering produced: the source and the top-level names its statements bind. */
interface Rendering {
  source: string
  names: string[]
  /** The let, const and class names among `names`. */
  lexical: Set<string>
}

/** Kinds of names, so expressions use each kind sensibly. */
type NameKind = 'value' | 'mutable' | 'function' | 'class'

/** A top-level name: what it holds, and whether it is lexical (let, const, class). */
type Name = [name: string, kind: NameKind, lexical: boolean]

/** The names statement `i` of kind `kind` declares at top level. */
function declaredBy(kind: number, i: number): Name[] {
  switch (kind) {
    case 0: return [[`v${i}`, 'mutable', false]]
    case 1: return [[`l${i}`, 'mutable', true]]
    case 2: return [[`c${i}`, 'value', true]]
    case 3: return [[`p${i}`, 'value', true], [`q${i}`, 'value', true], [`r${i}`, 'value', true]]
    case 4: return [[`s${i}`, 'mutable', true], [`u${i}`, 'mutable', true], [`w${i}`, 'value', true]]
    case 5: return [[`m${i}`, 'mutable', false]]
    case 6: return [[`f${i}`, 'function', false]]
    case 7: return [[`K${i}`, 'class', true]]
    case 8: return [[`E${i}`, 'class', true]]
    case 9: return [[`acc${i}`, 'mutable', false]]
    case 10: return [[`sum${i}`, 'mutable', false]]
    case 11: return [[`keys${i}`, 'mutable', false], [`key${i}`, 'mutable', false]]
    case 12: return [[`fa${i}`, 'value', true]]
    case 13: return [[`n${i}`, 'mutable', false]]
    default: return []
  }
}

/**
 * Renders a choice list; `awaits` inserts `await` where a choice asks for it. Statement `i`
 * reads only names that are initialized by then: lexical names of earlier statements, and
 * var and function names anywhere (hoisted). Reads in the temporal dead zone are left out
 * because the lowering does not reproduce it (see the known discrepancy below), and they would
 * hide every other finding.
 */
function render(choices: Choice[], awaits: boolean): Rendering {
  const declared = choices.map((item, i) => declaredBy(item.kind, i))
  const hoisted = declared.flat().filter(([, , lexical]) => !lexical)
  const names = declared.flat().map(([name]) => name)
  const pick = <T>(list: readonly T[], n: number): T | undefined => (list.length === 0 ? undefined : list[n % list.length])

  const literal = (n: number): string => pick(['0', '1', '2', '7', '"s"', '"t"', 'true', 'null', 'undefined', '[]'], n)!
  let all: Name[] = []
  /** A small expression over literals and the names statement `i` may read. */
  const expression = (n: number, depth = 0): string => {
    const target = pick(all, n * 7 + depth)
    if (depth > 1 || target === undefined) return literal(n)
    switch (n % 9) {
      case 0: return literal(n)
      // Classes by name, never by value: `+` would stringify their source, which `await` changes.
      case 1: return target[1] === 'function' ? `${target[0]}(${literal(n >> 1)})` : target[1] === 'class' ? `${target[0]}.name` : target[0]
      case 2: return `typeof ${target[0]}`
      case 3: return `${expression(n >> 1, depth + 1)} + ${expression(n >> 2, depth + 1)}`
      case 4: return `[${expression(n >> 1, depth + 1)}, ${literal(n >> 2)}]`
      case 5: return `({ k: ${expression(n >> 1, depth + 1)} })`
      case 6: return target[1] === 'class' ? `new ${target[0]}().m()` : `${target[0]} ? 1 : 2`
      case 7: return `\`t\${${expression(n >> 1, depth + 1)}}\``
      default: return `(${literal(n)}, ${expression(n >> 1, depth + 1)})`
    }
  }
  const statements = choices.map((item, i) => {
    all = [...declared.slice(0, i).flat().filter(([, , lexical]) => lexical), ...hoisted]
    const { a, b, c } = item
    const aw = (text: string) => (awaits && item.awaited ? `await (${text})` : text)
    const mutable = pick(all.filter(([, kind]) => kind === 'mutable').map(([name]) => name), a)
    switch (item.kind) {
      case 0: return `var v${i} = ${aw(expression(a))};`
      case 1: return `let l${i} = ${aw(expression(a))};`
      case 2: return `const c${i} = ${aw(expression(a))};`
      case 3: return `const [p${i}, , q${i} = ${aw(expression(a))}, ...r${i}] = [${expression(b)}, ${literal(c)}, undefined, ${literal(a)}];`
      case 4: return `let { s${i}, t: u${i} = ${aw(expression(a))}, ...w${i} } = { s${i}: ${expression(b)}, z: ${literal(c)} };`
      case 5: return `var { n: [m${i} = ${aw(literal(a))}] = [] } = ${b % 2 ? '{}' : `{ n: [${literal(c)}] }`};`
      case 6: return `function f${i}(x) { return [x, ${literal(a)}] }`
      case 7: return `class K${i} { static s = ${literal(a)}; m() { return ${literal(b)} } }`
      case 8: return `class E${i} extends (${aw('Array')}) { static n = ${literal(a)} }`
      case 9: return `var acc${i} = 0; for (let j = 0; j < ${a % 4}; j++) acc${i} += ${aw('j')};`
      case 10: return `var sum${i} = ''; for (const [k, v] of [[1, ${literal(a)}], [2, ${literal(b)}]]) sum${i} += ${aw('k')} + v;`
      case 11: return `var keys${i} = ''; for (var key${i} in { a: ${literal(a)}, b: 2 }) keys${i} += ${aw(`key${i}`)};`
      case 12: return awaits && item.awaited
        ? `const fa${i} = []; for await (const v of [${literal(a)}, Promise.resolve(${literal(b)})]) fa${i}.push(v);`
        : `const fa${i} = []; for (const v of [${literal(a)}, ${literal(b)}]) fa${i}.push(v);`
      case 13: return `var n${i} = 0; while (n${i} < ${a % 3}) n${i} = n${i} + ${aw('1')};`
      case 14: return mutable ? `do { ${mutable} = ${aw(expression(b))} } while (false);` : `do ; while (false);`
      case 15: return `${aw(expression(a))};`
      case 16: return `if (${aw(expression(a))}) { ${expression(b)}; } else { ${expression(c)}; }`
      case 17: return `{ let inner = ${aw(expression(a))}; ${expression(b)}; }`
      case 18: return `try { ${expression(a)}; throw ${aw(literal(b))} } catch (error) { ${b % 2 ? 'error' : expression(c)}; }`
      case 19: return mutable ? `${mutable} = ${aw(expression(b))};` : `${expression(b)};`
      case 20: return `out${i}: for (const v of [1, 2, 3]) { if (v === ${1 + (a % 3)}) break out${i}; ${aw('v')}; }`
      default: return `switch (${aw(expression(a))}) { case ${literal(b)}: ${expression(c)}; break; default: ${literal(c)}; }`
    }
  })
  const lexical = new Set(declared.flat().filter(([, , isLexical]) => isLexical).map(([name]) => name))
  return { source: statements.join(choices.length % 2 ? '\n' : ' '), names, lexical }
}

/** A comparable description of a value from any realm (functions by name, objects by shape). */
/** The reference with await: the program as the body of an async function, returning readers of its bindings. */
async function asAsyncFunction(source: string, names: string[]): Promise<Outcome> {
  const context = vm.createContext({})
  let body: () => Promise<Array<() => unknown>>
  try {
    body = vm.runInContext(`(async () => {\n${source}\n;return [${names.map((name) => `() => ${name}`).join(', ')}] })`, context)
  } catch (error) {
    return { error: `compile ${(error as Error).name}` }
  }
  try {
    const readers = await body()
    return { bindings: readers.map((reader) => readAll(reader, ['-'])[0]) }
  } catch (error) {
    return { error: `run ${describeError(error)}` }
  }
}

/**
 * What is compared of an outcome. After a failure, let, const and class bindings are left out:
 * a classic script leaves a binding whose initializer threw in its temporal dead zone forever,
 * while the lowering has already made it a global holding undefined (the second known
 * discrepancy below).
 */
function comparable(outcome: Outcome, rendering: Rendering): Outcome {
  if (outcome.error === undefined || outcome.bindings === undefined) return outcome
  return { ...outcome, bindings: outcome.bindings.filter((_, index) => !rendering.lexical.has(rendering.names[index]!)) }
}

const programs = fc.array(choice, { minLength: 1, maxLength: 8 })

describe.each(['script', 'repl'] as const)('%s lowering under fuzzing', (format) => {
  test('without await: the same completion, bindings and failures as vm.Script', async () => {
    await fc.assert(
      fc.asyncProperty(programs, async (choices) => {
        const rendering = render(choices, false)
        const { source, names } = rendering
        expect(comparable(await lowered(source, format, names), rendering), source).toEqual(comparable(asScript(source, names), rendering))
      }),
      { numRuns: RUNS },
    )
  }, TIMEOUT_MS)

  test('with await: the completion of the await-free program and the bindings of an async function', async () => {
    await fc.assert(
      fc.asyncProperty(programs, async (choices) => {
        const plain = render(choices, false)
        const awaited = render(choices, true)
        const actual = await lowered(awaited.source, format, awaited.names)
        const reference = await asAsyncFunction(awaited.source, awaited.names)
        if (reference.error !== undefined) {
          expect(actual.error, awaited.source).toEqual(reference.error)
          return
        }
        expect({ completion: actual.completion, bindings: actual.bindings, error: actual.error }, awaited.source).toEqual({
          completion: asScript(plain.source, plain.names).completion,
          bindings: reference.bindings,
          error: undefined,
        })
      }),
      { numRuns: RUNS },
    )
  }, TIMEOUT_MS)
})

/**
 * Discrepancies the fuzzer found, reduced to minimal programs. The lowering turns a top-level
 * let, const or class into a global it creates before the initializer runs, so the temporal
 * dead zone is not reproduced in `script` and `repl` (`scoped-repl` keeps real declarations
 * and agrees with vm.Script). Each case fails until the lowering is fixed; the generator avoids
 * these shapes so they do not mask other findings.
 */
describe.each(['script', 'repl'] as const)('known discrepancies of %s lowering', (format) => {
  const cases: Array<[string, string, string]> = [
    ['a read inside its own initializer throws', 'let x = x', 'x'],
    ['a read through a destructuring default of the same binding throws', 'const [a = a] = []', 'a'],
    ['a read before the declaration names the dead zone', 'x; let x = 1', 'x'],
    ['a binding whose initializer threw stays unreadable', 'let y = (() => { throw new Error("boom") })()', 'y'],
  ]
  test.fails.each(cases)('%s: %s', async (_title, source, name) => {
    const names = [name]
    expect(await lowered(source, format, names)).toEqual(asScript(source, names))
  })
})
