// attack: throws a value whose every coercion hook throws (toPrimitive, toString, valueOf, toStringTag)
// expect: exception
const hostile = {
  [Symbol.toPrimitive]() { throw new Error('toPrimitive') },
  toString() { throw new Error('toString') },
  valueOf() { throw new Error('valueOf') },
  get [Symbol.toStringTag]() { throw new Error('toStringTag') },
}
throw hostile
