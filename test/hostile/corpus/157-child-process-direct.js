// attack: starts a process through the ChildProcess class directly, below child_process's functions
// expect: ok
// value: "started"
const { ChildProcess } = await import('node:child_process')
const child = new ChildProcess()
child.spawn({ file: 'sleep', args: ['sleep', '__SLEEP__'], stdio: 'ignore' })
/* completion */ 'started'
