/**
 * Which prototypes make a container plain: this realm's `Object.prototype` / `Array.prototype`
 * by identity, or the same intrinsics of another realm (a `vm` context), recognised by a check a
 * program cannot forge.
 */
import {
  ArrayPrototype,
  functionToString,
  getOwnPropertyDescriptor,
  getPrototypeOf,
  hasOwn,
  isArray,
  isProxy,
  ObjectPrototype,
  ownDataValue,
  WeakObjectSet,
} from './intrinsics.js'

/** Prototypes of other realms already proven intrinsic; an intrinsic stays intrinsic forever. */
const provenIntrinsics = new WeakObjectSet()

/** Whether objects with this prototype may be copied as plain records. */
export function isRecordPrototype(proto: object | null): boolean {
  return proto === null || proto === ObjectPrototype || isForeignIntrinsic(proto, 'Object')
}

/** Whether arrays with this prototype may be copied as plain lists. */
export function isListPrototype(proto: object | null): boolean {
  return proto === ArrayPrototype || (proto !== null && isForeignIntrinsic(proto, 'Array'))
}

/**
 * A realm's intrinsic `X.prototype` is the only object that is the `prototype` of a native
 * function whose source text reads `function X() { [native code] }`: built-in constructors have
 * a non-writable, non-configurable `prototype`, user functions and classes never print as native
 * code, and bound functions and proxies print without a name. The structural pre-checks (an
 * intrinsic `Object.prototype` has a null prototype and `Array.prototype` is itself an array)
 * keep the common rejection cheap.
 */
function isForeignIntrinsic(proto: object, name: 'Object' | 'Array'): boolean {
  if (provenIntrinsics.has(proto)) return true
  if (isProxy(proto)) return false
  if (name === 'Object' ? getPrototypeOf(proto) !== null : !isArray(proto)) return false
  const constructor = ownDataValue(proto, 'constructor')
  if (typeof constructor !== 'function' || isProxy(constructor)) return false
  const link = getOwnPropertyDescriptor(constructor, 'prototype')
  if (link === undefined || !hasOwn(link, 'value') || link.value !== proto) return false
  if (link.writable !== false || link.configurable !== false) return false
  if (functionToString(constructor) !== `function ${name}() { [native code] }`) return false
  provenIntrinsics.add(proto)
  return true
}

/** `Date instance`, or a generic phrase when the prototype names no constructor. */
export function describeInstance(proto: object | null): string {
  if (proto !== null && !isProxy(proto)) {
    const constructor = ownDataValue(proto, 'constructor')
    if (typeof constructor === 'function' && !isProxy(constructor)) {
      const name = ownDataValue(constructor, 'name')
      if (typeof name === 'string' && name !== '' && name.length <= 64) return `${name} instance`
    }
  }
  return 'object with a custom prototype'
}
