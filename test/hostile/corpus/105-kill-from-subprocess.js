// attack: a subprocess sends SIGKILL to the process hosting the worker
// expect: worker-exit
// known-limit[thread]: a subprocess may signal its parent, which on the thread host is the host itself
const { execFileSync } = await import('node:child_process')
execFileSync('kill', ['-9', String(process.pid)])
await new Promise(() => {})
