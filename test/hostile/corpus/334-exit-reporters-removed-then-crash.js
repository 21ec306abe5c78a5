// attack: removes every 'exit' and 'uncaughtExceptionMonitor' listener (a process tier's helper reports its exit from them), then throws from a timer: the host must still see the process end
// expect: worker-exit
// hosts: process,confined,stream
process.removeAllListeners('exit')
process.removeAllListeners('uncaughtExceptionMonitor')
process.removeAllListeners('uncaughtException')
setTimeout(() => { throw new Error('unreported') }, 0)
await new Promise((resolve) => setTimeout(resolve, 3000))
/* completion */ 'survived'
