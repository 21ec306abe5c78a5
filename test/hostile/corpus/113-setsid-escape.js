// attack: a double fork into a new session and process group, escaping both the tree and the group
// expect: ok
// value: "escaped"
const { execFile } = await import('node:child_process')
await new Promise((resolve) => execFile('sh', ['-c', 'setsid sleep __SLEEP__ > /dev/null 2>&1 < /dev/null & exit 0'], resolve))
/* completion */ 'escaped'
