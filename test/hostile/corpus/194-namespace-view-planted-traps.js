// attack: proxy traps planted on Object.prototype (get, set, has, ownKeys…) would become traps of a namespace's read-only view if its handler inherited from Object.prototype, hijacking every tool call
// expect: ok
// value: ["still echoed", true, ["echo"], "TypeError: Cannot assign tools.planted: the tool namespace tools is read-only"]
const traps = ['get', 'set', 'has', 'ownKeys', 'defineProperty', 'getOwnPropertyDescriptor', 'deleteProperty', 'apply']
for (const trap of traps) {
  Object.defineProperty(Object.prototype, trap, { __proto__: null, value: () => { throw new Error('planted ' + trap) }, configurable: true, writable: true })
}
let assigned
try { tools.planted = 1 } catch (e) { assigned = e.name + ': ' + e.message.split(';')[0] }
const seen = [await tools.echo('still echoed'), Object.hasOwn(tools, 'echo'), Object.keys(tools).filter((name) => name === 'echo'), assigned]
for (const trap of traps) delete Object.prototype[trap]
/* completion */ seen
