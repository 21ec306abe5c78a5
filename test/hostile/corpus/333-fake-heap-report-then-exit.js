// attack: writes V8's fatal heap report to descriptor 2 itself, then exits with code 3: the host must name the exit, not a heap exhaustion that never happened
// expect: worker-exit
// message: exit code 3
// hosts: process,confined,stream
const { writeSync } = await import('node:fs')
writeSync(2, '\nFATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n')
await new Promise((resolve) => setTimeout(resolve, 100))
process.exit(3)
