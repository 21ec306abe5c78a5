// attack: a subprocess tree (a shell with nested shells and background sleepers) left running after return
// expect: ok
// value: "spawned"
const { spawn } = await import('node:child_process')
spawn('sh', ['-c', 'sleep __SLEEP__ & sleep __SLEEP__ & sh -c "sleep __SLEEP__ & wait" & wait'], { stdio: 'ignore' })
await new Promise((resolve) => setTimeout(resolve, 200))
/* completion */ 'spawned'
