/**
 * Runtime support for lowered programs: the object a lowered program receives as `__ptc__`.
 *
 * This module runs inside the worker, in the same realm as programs, and keeps working after
 * hostile programs have run there: every intrinsic it needs is captured at module load (the way
 * src/intrinsics.ts describes), every descriptor it builds has a null prototype (a polluted
 * `Object.prototype.get` must not turn a data descriptor into an accessor), and it iterates its
 * own rest-parameter arrays by index.
 *
 * Semantics of the declarations these hooks define are documented in `repl.ts` (globals) and
 * `scoped-repl.ts` (carried scope).
 */

import { apply, realmGlobal, uncurryThis } from '../intrinsics.js'

const reflectDefineProperty = Reflect.defineProperty
const reflectGetOwnPropertyDescriptor = Reflect.getOwnPropertyDescriptor
const objectHasOwn = Object.hasOwn
const objectCreate = Object.create
const weakSetAdd = uncurryThis(WeakSet.prototype.add)
const weakSetHas = uncurryThis(WeakSet.prototype.has)
const WeakSetConstructor = WeakSet
const TypeErrorConstructor = TypeError

/**
 * What one environment keeps between runs. Create one per environment with
 * {@link createProgramState} and pass the same object to every run's {@link createProgramHooks};
 * it lives as long as the environment and holds nothing that needs disposal.
 */
export interface ProgramState {
  /** The global object that repl and script declarations become properties of. */
  readonly global: object
  /** The scoped-repl carried scope: a null-prototype record of name → latest value. */
  readonly scope: Record<string, unknown>
  /** Getters of the constants this environment defined, to tell them from other accessors. */
  readonly constants: WeakSet<object>
}

/**
 * The `__ptc__` object of one run. Only lowered code calls these; the names and argument
 * shapes are the contract between `lowerProgram` and this module.
 */
export interface ProgramHooks {
  /** The run's completion value so far; the lowered wrapper returns it. */
  completion: unknown
  /** Start of a run: ensure each var-declared name exists (keeping its value) and is writable. */
  vars(...names: string[]): void
  /** Start of a run: define hoisted functions, given as `name, function` pairs. */
  functions(...pairs: unknown[]): void
  /** Before a let/const/class initializer: make each name a writable global, keeping its value. */
  lexical(...names: string[]): void
  /** After a const initializer: make each name read-only (assignment throws a TypeError). */
  constant(...names: string[]): void
  /** A sloppy block-level function declaration ran: publish it as the global `name`. */
  publish(name: string, value: unknown): void
  /** scoped-repl: the carried value of `name` (undefined when none was carried). */
  carried(name: string): unknown
  /** scoped-repl: the run's top-level bindings, as `name, getter` pairs. */
  track(...pairs: unknown[]): void
  /** scoped-repl, when the run settles: copy every initialized tracked binding into the scope. */
  commit(): void
}

/** A fresh state for a new environment; `global` defaults to this realm's global object. */
export function createProgramState(global: object = realmGlobal): ProgramState {
  return { global, scope: objectCreate(null) as Record<string, unknown>, constants: new WeakSetConstructor() }
}

/** The `__ptc__` object for one run of an environment. */
export function createProgramHooks(state: ProgramState): ProgramHooks {
  return new RunHooks(state)
}

class RunHooks implements ProgramHooks {
  completion: unknown = undefined
  private tracked: unknown[] = []

  constructor(private readonly state: ProgramState) {}

  vars(...names: string[]): void {
    for (let index = 0; index < names.length; index++) {
      const name = names[index]!
      const current = this.describe(name)
      // An existing var keeps its value; a constant from an earlier run becomes writable.
      if (current === undefined) this.defineValue(name, undefined, 'var')
      else if (current.constant) this.defineValue(name, current.value, 'var')
    }
  }

  functions(...pairs: unknown[]): void {
    for (let index = 0; index + 1 < pairs.length; index += 2) {
      this.defineValue(pairs[index] as string, pairs[index + 1], 'function')
    }
  }

  lexical(...names: string[]): void {
    for (let index = 0; index < names.length; index++) {
      const name = names[index]!
      const current = this.describe(name)
      if (current === undefined) this.defineValue(name, undefined, 'lexical')
      else if (!current.writable) this.defineValue(name, current.value, 'lexical')
    }
  }

  constant(...names: string[]): void {
    const { global, constants } = this.state
    for (let index = 0; index < names.length; index++) {
      const name = names[index]!
      const value = this.describe(name)?.value
      const get = () => value
      const set = () => {
        throw new TypeErrorConstructor(`Assignment to constant variable "${name}".`)
      }
      weakSetAdd(constants, get)
      reflectDefineProperty(global, name, { __proto__: null, get, set, enumerable: true, configurable: true } as PropertyDescriptor)
    }
  }

  publish(name: string, value: unknown): void {
    this.defineValue(name, value, 'function')
  }

  carried(name: string): unknown {
    const scope = this.state.scope
    return objectHasOwn(scope, name) ? scope[name] : undefined
  }

  track(...pairs: unknown[]): void {
    this.tracked = pairs
  }

  commit(): void {
    const { tracked, state } = this
    for (let index = 0; index + 1 < tracked.length; index += 2) {
      let value: unknown
      try {
        value = (tracked[index + 1] as () => unknown)()
      } catch {
        // Still in its temporal dead zone (the run threw before the declaration): keep the
        // value an earlier run left.
        continue
      }
      reflectDefineProperty(state.scope, tracked[index] as string, dataDescriptor(value))
    }
  }

  /** The global property `name` as these hooks care about it, read without prototype lookups. */
  private describe(name: string): { value: unknown; writable: boolean; constant: boolean } | undefined {
    const { global, constants } = this.state
    const descriptor = reflectGetOwnPropertyDescriptor(global, name)
    if (descriptor === undefined) return undefined
    if (objectHasOwn(descriptor, 'value')) {
      return { value: descriptor.value, writable: descriptor.writable === true, constant: false }
    }
    const getter = objectHasOwn(descriptor, 'get') ? descriptor.get : undefined
    if (getter !== undefined && weakSetHas(constants, getter)) {
      return { value: apply(getter, global, []), writable: false, constant: true }
    }
    return { value: undefined, writable: false, constant: false }
  }

  /** Define `name` as a writable global; explain in the program's terms when that is impossible. */
  private defineValue(name: string, value: unknown, kind: 'var' | 'lexical' | 'function'): void {
    const global = this.state.global
    if (reflectDefineProperty(global, name, dataDescriptor(value))) return
    // A var or function may still reuse a non-configurable global if it is writable, as in a
    // script; a lexical declaration may not (a script would refuse it too).
    if (kind !== 'lexical' && reflectDefineProperty(global, name, { __proto__: null, value } as PropertyDescriptor)) return
    throw new TypeErrorConstructor(`Cannot declare "${name}": the global "${name}" cannot be redefined.`)
  }
}

function dataDescriptor(value: unknown): PropertyDescriptor {
  return { __proto__: null, value, writable: true, enumerable: true, configurable: true } as PropertyDescriptor
}
