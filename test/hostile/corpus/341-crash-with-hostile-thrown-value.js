// attack: removes the runtime's error handlers, then throws from a timer an error whose every property getter, and every trap of its prototype, throws it again: a process tier's helper describes the crash in its own 'uncaughtExceptionMonitor' listener, on the program's thread, and the host must still hear a worker exit
// expect: worker-exit
// hosts: process,confined,stream
process.removeAllListeners('uncaughtException')
process.removeAllListeners('unhandledRejection')
const poisoned = new Error('poisoned')
for (const key of ['message', 'stack', 'name', 'cause', 'constructor']) Object.defineProperty(poisoned, key, { get() { throw poisoned } })
Object.setPrototypeOf(poisoned, new Proxy({}, { get() { throw poisoned }, getPrototypeOf() { throw poisoned } }))
setTimeout(() => { throw poisoned }, 0)
await new Promise((resolve) => setTimeout(resolve, 3000))
/* completion */ 'survived'
