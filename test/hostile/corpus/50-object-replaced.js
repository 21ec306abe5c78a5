// attack: replaces Object and its static methods used in validation
// expect: ok
// value: {"a": [1, {"b": true}]}
const fake = function () { throw new Error('Object is gone') }
for (const key of ['keys', 'entries', 'getPrototypeOf', 'getOwnPropertyDescriptor', 'defineProperty', 'assign', 'create', 'freeze', 'hasOwn']) Object[key] = fake
Object.prototype.hasOwnProperty = fake
globalThis.Object = fake
/* completion */ ({ a: [1, { b: true }] })
