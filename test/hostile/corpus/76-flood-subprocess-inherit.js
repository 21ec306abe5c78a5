// attack: a subprocess inheriting stdio floods the descriptors the worker shares with its host process
// expect: output-limit
// known-limit[thread]: an inherited descriptor is the host's own stdout, which a worker thread shares
const { spawn } = await import('node:child_process')
spawn('yes', ['inherited flood'], { stdio: 'inherit' })
await new Promise(() => {})
