// attack: writes V8's fatal heap report to descriptor 2 itself (the host now reads that report to name a heap exhaustion), then finishes normally; the run must still succeed
// expect: ok
// value: "finished"
const { writeSync } = await import('node:fs')
writeSync(2, '\n<--- Last few GCs --->\n\nFATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n----- Native stack trace -----\n')
await new Promise((resolve) => setTimeout(resolve, 100))
/* completion */ 'finished'
