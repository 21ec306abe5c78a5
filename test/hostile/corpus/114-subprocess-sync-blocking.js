// attack: a synchronous subprocess call that blocks the worker thread past the deadline
// expect: timeout
// timeout: 1000
// known-bug[thread]: the result arrives only when the sync subprocess exits on its own, and nothing kills it
const { execFileSync } = await import('node:child_process')
execFileSync('sleep', ['__SLEEP_SHORT__'])
