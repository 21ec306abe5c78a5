// attack: a subprocess sends SIGKILL to the process hosting the worker
// expect: worker-exit
// hosts: confined
const { execFileSync } = await import('node:child_process')
execFileSync('kill', ['-9', String(process.pid)])
await new Promise(() => {})
