// attack: setters planted on Object.prototype for the field names of runtime messages
// expect: ok
// value: [3, "done"]
for (const key of ['value', 'args', 'initializer', 'message', 'items', 'id']) {
  Object.defineProperty(Object.prototype, key, { __proto__: null, set() { throw new Error(`setter for ${key}`) }, configurable: true })
}
const echoed = await tools.echo(3)
/* completion */ [echoed, 'done']
