// attack: throws a plain object whose inspection hooks throw or recurse
// expect: exception
const util = await import('node:util')
const hostile = {
  [util.inspect.custom]() { throw new Error('inspect.custom') },
  get [Symbol.toStringTag]() { throw new Error('toStringTag') },
}
hostile.self = hostile
throw hostile
