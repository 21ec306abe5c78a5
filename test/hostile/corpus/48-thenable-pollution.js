// attack: makes every object and array a thenable, which would hijack any internal promise resolution
// expect: ok
// value: 5
Object.prototype.then = function (resolve) { resolve('hijacked') }
Array.prototype.then = function (resolve) { resolve('hijacked') }
const value = await tools.echo(5)
delete Object.prototype.then
delete Array.prototype.then
/* completion */ value
