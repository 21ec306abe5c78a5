// attack: a double fork into a new session and process group, escaping both the tree and the group
// expect: ok
// value: "escaped"
// known-bug[thread]: the thread host cannot find a setsid double-forked process (no PID namespace); it outlives the run
// known-bug[confined+repl]: a retained confined environment kills only the process groups it recorded at settlement; the escaped process outlives the run (until the environment is released)
// known-bug[confined+scoped-repl]: a retained confined environment kills only the process groups it recorded at settlement; the escaped process outlives the run (until the environment is released)
const { execFile } = await import('node:child_process')
await new Promise((resolve) => execFile('sh', ['-c', 'setsid sleep __SLEEP__ > /dev/null 2>&1 < /dev/null & exit 0'], resolve))
/* completion */ 'escaped'
