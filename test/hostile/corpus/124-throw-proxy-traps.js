// attack: throws a proxy whose every trap throws
// expect: exception
const trap = () => { throw new Error('trap') }
throw new Proxy({}, { get: trap, has: trap, ownKeys: trap, getPrototypeOf: trap, getOwnPropertyDescriptor: trap })
