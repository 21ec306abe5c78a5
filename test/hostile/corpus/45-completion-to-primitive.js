// attack: the completion carries Symbol.toPrimitive, toJSON and valueOf tricks
// expect: invalid-output
/* completion */ ({ [Symbol.toPrimitive]() { throw new Error('coerced') }, toJSON() { return 'rewritten' }, valueOf() { return 1 } })
