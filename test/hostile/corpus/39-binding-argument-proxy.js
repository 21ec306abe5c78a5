// attack: a proxy whose traps lie about its keys, passed as a binding argument
// expect: exception
// message: arguments must be lossless JSON
const liar = new Proxy({ a: 1 }, { ownKeys: () => ['a', 'b'], get: (_, key) => (key === 'b' ? () => 'function' : 1) })
await tools.echo(liar)
