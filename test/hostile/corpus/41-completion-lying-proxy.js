// attack: the completion holds a proxy that lies about its keys and descriptors
// expect: invalid-output
const liar = new Proxy({}, {
  ownKeys: () => ['x'],
  getOwnPropertyDescriptor: () => ({ value: 1, enumerable: true, configurable: true }),
  get: () => { throw new Error('read through the proxy') },
})
/* completion */ ({ inner: liar })
