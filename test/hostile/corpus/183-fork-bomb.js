// attack: starts processes without end (a fork bomb, bounded here at 400 so that no host can be swamped by it)
// expect: worker-exit
// message: maxProcesses
// hosts: process, confined
// timeout: 20000
/* Each shell forks two sleeping children of its own until the count runs out, so the tree grows
   faster than one program could spawn it. The environment may hold 128 processes here. */
const { spawn } = await import('node:child_process')
const bomb = 'n=$1; [ "$n" -gt 0 ] || exit 0; sleep __SLEEP__ & sh -c "$0" "$0" $((n-1)) & sh -c "$0" "$0" $((n-1)) & wait'
spawn('sh', ['-c', bomb, bomb, '8'], { stdio: 'ignore' })
await tools.delay(1000)
await tools.delay(1000)
/* completion */ 'spawned'
