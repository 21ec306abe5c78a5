/**
 * How code that runs in a program's realm calls built-ins. That code (`src/worker`, `src/json`,
 * the lowered programs' hooks and position map in `src/transform`) keeps working after a program
 * replaced any global or built-in method, because it captures what it needs while its module
 * loads, before any program runs, and afterwards calls only what it captured. Lint enforces
 * this (lint/hostile-realm.mjs).
 *
 * One way of calling: a prototype method is captured uncurried, taking its receiver first
 * (`const weakSetHas = uncurryThis(WeakSet.prototype.has)`, then `weakSetHas(set, value)`), so
 * no call goes through a `Function.prototype.call` or `apply` a program could have replaced; a
 * static function is captured as is (`const { defineProperty } = Reflect`); a function known only
 * at run time (one the worker wraps) is called with the captured `apply`.
 *
 * The captures below are the ones several realm modules share; src/json/intrinsics.ts and
 * src/worker/intrinsics.ts add their own and re-export these. Nothing here reaches the host's
 * process or a worker's port, so the host may import this module too.
 */
import { types } from 'node:util'

/** `method` as a function taking its receiver first; bound now, so later patches cannot reach it. */
export const uncurryThis: <T, A extends unknown[], R>(method: (this: T, ...args: A) => R) => (self: T, ...args: A) => R =
  Function.prototype.bind.bind(Function.prototype.call)

/** `Reflect.apply`, for functions known only at run time. */
export const { apply } = Reflect

/** This realm's global object, as it was before any program ran. */
export const realmGlobal: typeof globalThis = globalThis

export const { defineProperty, getOwnPropertyDescriptor, getPrototypeOf, ownKeys, setPrototypeOf } = Reflect
export const { hasOwn } = Object
export const { isArray } = Array
export const { isProxy } = types
export const TypeErrorOf = TypeError
export const weakSetHas = uncurryThis(WeakSet.prototype.has)
export const weakSetAdd = uncurryThis(WeakSet.prototype.add)
