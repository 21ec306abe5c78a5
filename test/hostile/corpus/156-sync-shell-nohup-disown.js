// attack: synchronous shells detach sleepers with nohup and disown, which ignore hangups and leave the shell's job table
// expect: ok
// value: "returned"
const { execSync, execFileSync } = await import('node:child_process')
execSync('nohup sleep __SLEEP__ > /dev/null 2>&1 &')
execFileSync('bash', ['-c', 'sleep __SLEEP__ > /dev/null 2>&1 & disown'])
/* completion */ 'returned'
