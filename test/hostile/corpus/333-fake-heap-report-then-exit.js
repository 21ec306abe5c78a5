// attack: writes V8's fatal heap report to descriptor 2 itself, then exits with code 3: the host must name the exit, not a heap exhaustion that never happened
// expect: worker-exit
// message: exit code 3
// hosts: process,confined,stream
// known-bug: the host takes any "reached heap limit" or "out of memory" text on the helper's stderr, the program's own included, as V8's report: the run fails "its heap reached its cap (maxOldGenerationSizeMb)" (before this layout, "exceeded its memory budget")
const { writeSync } = await import('node:fs')
writeSync(2, '\nFATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n')
await new Promise((resolve) => setTimeout(resolve, 100))
process.exit(3)
