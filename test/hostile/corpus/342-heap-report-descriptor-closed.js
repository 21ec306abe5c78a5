// attack: closes descriptor 2 (where V8 prints its fatal heap report, which the host now reads to name a heap exhaustion), then allocates until the heap reaches its cap: the run must still fail as running out of memory (the stream host's helper keeps a worker, whose exhaustion its own thread reports: there the case runs)
// expect: worker-exit
// message: out of memory|memory budget
// hosts: process,confined,stream
// timeout: 15000
const { closeSync, openSync } = await import('node:fs')
closeSync(2)
openSync('/dev/null', 'w') // takes descriptor 2: V8's report goes nowhere
const keep = []
for (;;) keep.push(new Array(1e6).fill(keep.length))
