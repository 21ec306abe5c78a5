import { getPrototypeOf, isArray, ObjectPrototype } from './intrinsics.js'

/**
 * Whether `value` is a plain object of this realm (its prototype is `Object.prototype` or
 * null, so no field read can reach a getter of someone else's class): what a parsed message, a
 * helper frame or a tools export must be before its fields are read.
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || isArray(value)) return false
  const proto = getPrototypeOf(value)
  return proto === ObjectPrototype || proto === null
}
