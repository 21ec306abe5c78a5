// attack: removes the runtime's process error handlers, then throws from a timer
// expect: worker-exit
// message: crashed: unguarded
process.removeAllListeners('uncaughtException')
process.removeAllListeners('unhandledRejection')
setTimeout(() => { throw new Error('unguarded') }, 0)
await new Promise((resolve) => setTimeout(resolve, 2000))
