// attack: a synchronous subprocess call that blocks the worker thread past the deadline
// expect: timeout
// timeout: 1000
const { execFileSync } = await import('node:child_process')
execFileSync('sleep', ['__SLEEP_SHORT__'])
