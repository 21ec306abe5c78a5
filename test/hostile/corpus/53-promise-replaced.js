// attack: replaces Promise and breaks then/catch/finally and the resolution functions
// expect: ok
// value: [4, "after"]
const value = await tools.echo(4)
Promise.prototype.then = function () { throw new Error('then is gone') }
Promise.prototype.catch = Promise.prototype.finally = Promise.prototype.then
Promise.resolve = Promise.reject = Promise.all = () => { throw new Error('Promise statics are gone') }
globalThis.Promise = function () { throw new Error('Promise is gone') }
/* completion */ [value, 'after']
