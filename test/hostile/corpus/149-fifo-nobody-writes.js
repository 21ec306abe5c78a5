// attack: opens a FIFO nobody writes, blocking the thread in open(2) for ever, under a 500 ms budget
// expect: timeout
// timeout: 500
// known-limit[thread]: the run settles on time, but a thread blocked in a system call cannot be ended from inside its process: it stays until the call returns (here: never), and runtime disposal warns PTC_STUCK_ENVIRONMENT
const fs = await import('node:fs')
const { execFileSync } = await import('node:child_process')
const fifo = `${fs.mkdtempSync('/tmp/ptc-corpus-fifo-')}/fifo`
execFileSync('mkfifo', [fifo])
fs.readFileSync(fifo)
