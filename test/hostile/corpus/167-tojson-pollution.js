// attack: toJSON planted on Object.prototype and Array.prototype, and Array.prototype re-parented onto a proxy answering toJSON, before a call and a completion the worker must still encode exactly (in a helper it serializes its messages itself)
// expect: ok
// value: {"echoed":{"list":[1,"two",{"three":3}]},"done":[true]}
Object.prototype.toJSON = function () { return 'forged object' }
Array.prototype.toJSON = function () { return 'forged array' }
Object.setPrototypeOf(Array.prototype, new Proxy(Object.create(null), { get: (_, key) => (key === 'toJSON' ? () => 'proxied' : undefined) }))
const echoed = await tools.echo({ list: [1, 'two', { three: 3 }] })
/* completion */ ({ echoed, done: [true] })
