// attack: replaces Array, Array.isArray, the array iterator and every mutating method
// expect: ok
// value: [1, [2, 3], []]
const fake = function () { throw new Error('arrays are broken') }
for (const key of ['push', 'pop', 'map', 'forEach', 'slice', 'splice', 'join', 'concat', 'reverse', 'fill']) Array.prototype[key] = fake
Array.prototype[Symbol.iterator] = function* () { yield 'forged' }
Array.isArray = () => false
Array.from = fake
globalThis.Array = fake
/* completion */ [1, [2, 3], []]
