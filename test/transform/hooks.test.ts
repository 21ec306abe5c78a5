import vm from 'node:vm'
import { describe, expect, test } from 'vitest'
import { createProgramHooks, createProgramState, type ProgramHooks } from '../../src/transform/index.js'
import { TestEnvironment } from './environment.js'

type Poison = [target: object, key: PropertyKey, value: unknown]

/**
 * Run `body` while this realm's intrinsics are poisoned, as a hostile program could poison the
 * worker's realm after the hooks module loaded. The window is synchronous and holds only hook
 * calls: the test harness itself would not survive the poison.
 */
function poisoned(poisons: Poison[], body: () => void): void {
  // Descriptors with a null prototype: a poisoned Object.prototype.get must not affect them.
  const originals = poisons.map(([target, key]) => {
    const original = Object.getOwnPropertyDescriptor(target, key)
    return original && { __proto__: null, ...original }
  })
  try {
    // Plain indexing throughout: destructuring an array would call the poisoned iterator.
    for (let index = 0; index < poisons.length; index++) {
      const poison = poisons[index]!
      Object.defineProperty(poison[0], poison[1], { __proto__: null, value: poison[2], configurable: true, writable: true } as PropertyDescriptor)
    }
    body()
  } finally {
    for (let index = poisons.length - 1; index >= 0; index--) {
      const poison = poisons[index]!
      const original = originals[index]
      if (original) Object.defineProperty(poison[0], poison[1], original as PropertyDescriptor)
      else delete (poison[0] as Record<PropertyKey, unknown>)[poison[1]]
    }
  }
}

const thrower = () => {
  throw new Error('poisoned')
}

function freshHooks(): { hooks: ProgramHooks; global: Record<string, unknown> } {
  const global = vm.runInContext('globalThis', vm.createContext({})) as Record<string, unknown>
  return { hooks: createProgramHooks(createProgramState(global)), global }
}

describe('hooks survive a poisoned realm', () => {
  test('declarations work after Object.prototype gains get, set and value', () => {
    const { hooks, global } = freshHooks()
    poisoned([[Object.prototype, 'get', thrower], [Object.prototype, 'set', thrower], [Object.prototype, 'value', 'x']], () => {
      hooks.vars('v')
      hooks.lexical('c')
      global.c = 1
      hooks.constant('c')
      hooks.functions('f', thrower)
    })
    expect(Object.getOwnPropertyDescriptor(global, 'v')).toMatchObject({ value: undefined, writable: true })
    expect(global.c).toBe(1)
    expect(global.f).toBe(thrower)
  })

  test('declarations work after Reflect, Object.hasOwn and WeakSet methods are replaced', () => {
    const { hooks, global } = freshHooks()
    hooks.lexical('c')
    global.c = 1
    hooks.constant('c')
    poisoned(
      [[Reflect, 'defineProperty', thrower], [Reflect, 'getOwnPropertyDescriptor', thrower], [Reflect, 'apply', thrower],
        [Object, 'hasOwn', thrower], [WeakSet.prototype, 'has', thrower], [WeakSet.prototype, 'add', thrower]],
      () => hooks.vars('c'),
    )
    expect(Object.getOwnPropertyDescriptor(global, 'c')).toMatchObject({ value: 1, writable: true })
  })

  test('the carried scope works after array iteration is poisoned', () => {
    const state = createProgramState({})
    const hooks = createProgramHooks(state)
    let value: unknown
    poisoned([[Array.prototype, Symbol.iterator, thrower]], () => {
      hooks.track('kept', () => 1, 'dead', () => { throw new ReferenceError('TDZ') })
      hooks.commit()
      value = createProgramHooks(state).carried('kept')
    })
    expect(value).toBe(1)
    expect(Object.keys(state.scope)).toEqual(['kept'])
  })
})

describe('program state', () => {
  test('each environment keeps its own carried scope', async () => {
    const first = new TestEnvironment('scoped-repl')
    const second = new TestEnvironment('scoped-repl')
    await first.run('let owner = "first"')
    await second.run('let owner = "second"')
    expect([await first.run('owner'), await second.run('owner')]).toEqual(['first', 'second'])
  })

  test('a carried name never recorded reads as undefined, not as an inherited property', () => {
    expect(createProgramHooks(createProgramState({})).carried('toString')).toBeUndefined()
  })

  test('hooks start each run with no completion value', () => {
    expect(createProgramHooks(createProgramState({})).completion).toBeUndefined()
  })

  test('the default global is the realm’s global object', () => {
    expect(createProgramState().global).toBe(globalThis)
  })

  test('an accessor another state defined is not mistaken for one of ours', async () => {
    const environment = new TestEnvironment('repl')
    const foreign = createProgramHooks(createProgramState(environment.global))
    foreign.lexical('shared')
    environment.global.shared = 1
    foreign.constant('shared')
    // `var` keeps an existing global as it is, and this accessor is not one of our constants.
    const { error } = await environment.fail('var shared; shared = 2')
    expect(error.name).toBe('TypeError')
  })
})
