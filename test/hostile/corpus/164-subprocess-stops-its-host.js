// attack: a subprocess stops the process hosting the program (SIGSTOP to its parent), so that nothing there answers any more, under a 1000 ms budget
// expect: timeout
// timeout: 1000
// known-limit[thread]: a subprocess's parent is the host process itself, which SIGSTOP would freeze (the README's thread-host limits)
const { execSync } = await import('node:child_process')
execSync('kill -STOP $PPID')
await new Promise(() => {})
