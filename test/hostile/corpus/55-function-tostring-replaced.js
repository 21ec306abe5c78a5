// attack: replaces Function.prototype.toString, call, apply and bind
// expect: ok
// value: {"a": 1, "echoed": "x"}
const fake = function () { throw new Error('functions are broken') }
Function.prototype.toString = fake
Function.prototype.call = fake
Function.prototype.apply = fake
Function.prototype.bind = fake
const echoed = await tools.echo('x')
/* completion */ ({ a: 1, echoed })
