/**
 * Intrinsics the JSON helpers use, captured when this module loads.
 *
 * This module is evaluated in the worker before any program runs; afterwards the program may
 * replace `Object`, `Array`, `JSON`, `Reflect` or any prototype method. Every helper in
 * `src/json` therefore calls only these captured functions (the way src/intrinsics.ts
 * describes), never a method looked up at run time, and never reads a property that could fall
 * through to a mutable prototype.
 */
import { types } from 'node:util'
import {
  TypeErrorOf,
  getOwnPropertyDescriptor,
  getPrototypeOf,
  hasOwn,
  isArray,
  isProxy,
  ownKeys,
  setPrototypeOf,
  uncurryThis,
  weakSetAdd,
  weakSetHas,
} from '../intrinsics.js'

export { getOwnPropertyDescriptor, getPrototypeOf, hasOwn, isArray, isProxy, ownKeys }
export const { keys: objectKeys } = Object
export const { isBoxedPrimitive } = types
export const { stringify } = JSON
export const TypeErrorCtor = TypeErrorOf

export const ObjectPrototype: object = Object.prototype
export const ArrayPrototype: object = Array.prototype

export const propertyIsEnumerable = uncurryThis(Object.prototype.propertyIsEnumerable) as (
  self: object,
  key: PropertyKey,
) => boolean
export const charCodeAt = uncurryThis(String.prototype.charCodeAt)
export const arrayJoin = uncurryThis(Array.prototype.join) as (list: unknown[], separator: string) => string
export const stringSlice = uncurryThis(String.prototype.slice)
export const regExpExec = uncurryThis(RegExp.prototype.exec)
export const functionToString = uncurryThis(Function.prototype.toString)

const SetCtor = Set
const WeakSetCtor = WeakSet
const setAdd = uncurryThis(Set.prototype.add)
const setHas = uncurryThis(Set.prototype.has)
const setDelete = uncurryThis(Set.prototype.delete)

/** A set of objects whose operations cannot be redirected by patching `Set.prototype`. */
export class ObjectSet {
  readonly #set = new SetCtor<object>()
  add(value: object): void {
    setAdd(this.#set, value)
  }
  has(value: object): boolean {
    return setHas(this.#set, value)
  }
  delete(value: object): void {
    setDelete(this.#set, value)
  }
}

/** Same for a weak set; see {@link ObjectSet}. */
export class WeakObjectSet {
  readonly #set = new WeakSetCtor<object>()
  add(value: object): void {
    weakSetAdd(this.#set, value)
  }
  has(value: object): boolean {
    return weakSetHas(this.#set, value)
  }
}

/**
 * Containers are built without a prototype, so storing a key such as `"0"` or `"__proto__"`
 * cannot hit a setter the program planted on `Object.prototype` or `Array.prototype`; the real
 * prototype is attached once the container is complete. (V8 keeps such objects in fast mode,
 * unlike `Object.create(null)`; measured several times faster than `Reflect.defineProperty`.)
 */
export function blankRecord(): Record<string, unknown> {
  const record = {}
  setPrototypeOf(record, null)
  return record as Record<string, unknown>
}

export function blankList(): unknown[] {
  const list: unknown[] = []
  setPrototypeOf(list, null)
  return list
}

/** Attach the prototype a finished {@link blankRecord} or {@link blankList} should have. */
export function finishContainer(container: object, isList: boolean): void {
  setPrototypeOf(container, isList ? ArrayPrototype : ObjectPrototype)
}

/** The own data value of `key`, or undefined for a missing or accessor property. */
export function ownDataValue(target: object, key: PropertyKey): unknown {
  const descriptor = getOwnPropertyDescriptor(target, key)
  // The descriptor inherits from Object.prototype: check ownership before reading `value`.
  return descriptor !== undefined && hasOwn(descriptor, 'value') ? descriptor.value : undefined
}
