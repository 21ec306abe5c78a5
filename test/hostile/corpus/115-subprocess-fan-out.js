// attack: starts 30 detached subprocesses in a burst through spawn, exec and execFile
// expect: ok
// value: 30
// timeout: 15000
const cp = await import('node:child_process')
for (let i = 0; i < 10; i++) {
  cp.spawn('sleep', ['__SLEEP__'], { stdio: 'ignore', detached: true })
  cp.exec('sleep __SLEEP__', () => {})
  cp.execFile('sleep', ['__SLEEP__'], () => {})
}
/* completion */ 30
