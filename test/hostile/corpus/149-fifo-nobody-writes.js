// attack: opens a FIFO nobody writes, blocking the thread in open(2) for ever, under a 500 ms budget
// expect: timeout
// timeout: 500
// known-bug[thread]: a worker blocked in a system call cannot be terminated: the run never settles on the thread host (issue 14, deadlines)
const fs = await import('node:fs')
const { execFileSync } = await import('node:child_process')
const fifo = `${fs.mkdtempSync('/tmp/ptc-corpus-fifo-')}/fifo`
execFileSync('mkfifo', [fifo])
fs.readFileSync(fifo)
