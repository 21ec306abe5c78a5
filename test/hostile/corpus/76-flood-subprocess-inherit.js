// attack: a subprocess inheriting stdio floods the descriptors the worker shares with its host process
// expect: output-limit
// hosts: confined
const { spawn } = await import('node:child_process')
spawn('yes', ['inherited flood'], { stdio: 'inherit' })
await new Promise(() => {})
