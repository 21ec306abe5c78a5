// attack: cuts the global object off its prototype chain
// expect: ok
// value: [1, 2]
Object.setPrototypeOf(globalThis, null)
/* completion */ [await tools.echo(1), 2]
