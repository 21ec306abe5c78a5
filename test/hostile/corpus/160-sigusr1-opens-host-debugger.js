// attack: a subprocess sends SIGUSR1 to the host process, on which Node opens a debugger that any local process can attach to and evaluate code in
// expect: ok
// value: "signalled"
// known-limit[thread]: a subprocess may signal its parent, the host itself: SIGUSR1 opens Node's debugger in it
/* The runner checks after every case that no debugger listens in the host. A helper process
   has its own pid and the host is its parent: both are signalled. */
const { execFileSync } = await import('node:child_process')
for (const pid of new Set([process.pid, process.ppid])) {
  try {
    execFileSync('kill', ['-USR1', String(pid)])
  } catch {}
}
await new Promise((resolve) => setTimeout(resolve, 500))
/* completion */ 'signalled'
