// attack: a double fork: the sleeper is orphaned at once, so no process tree leads to it
// expect: ok
// value: "orphaned"
const { execFile } = await import('node:child_process')
await new Promise((resolve) => execFile('sh', ['-c', '(sleep __SLEEP__ > /dev/null 2>&1 < /dev/null &) ; exit 0'], resolve))
/* completion */ 'orphaned'
