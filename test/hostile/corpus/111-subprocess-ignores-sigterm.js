// attack: a subprocess that ignores SIGTERM and SIGINT and detaches its stdio
// expect: ok
// value: "spawned"
const { spawn } = await import('node:child_process')
spawn('sh', ['-c', 'trap "" TERM INT HUP; sleep __SLEEP__ & wait'], { stdio: 'ignore' })
await new Promise((resolve) => setTimeout(resolve, 200))
/* completion */ 'spawned'
