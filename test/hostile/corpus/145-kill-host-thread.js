// attack: SIGKILLs every thread of the process it runs in, by thread id (a thread id passes a guard that only knows the pid)
// expect: worker-exit
// expect[thread]: exception
// message[thread]: isolation: 'process'
/* On the process host the program kills its own helper: only its environment ends. */
const { readdirSync } = await import('node:fs')
for (const id of readdirSync('/proc/self/task').map(Number)) if (id !== process.pid) process.kill(id, 'SIGKILL')
await new Promise(() => {})
