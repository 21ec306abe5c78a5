// attack: an endless microtask chain that never yields to the event loop
// expect: timeout
// timeout: 500
const spin = () => { Promise.resolve().then(spin) }
spin()
await new Promise(() => {})
