// attack: lowers its own process's stack limit from a subprocess (prlimit), under the `--stack-size` V8 was given, then recurses: a worker's stack is allocated when it starts, so there the recursion ends in a RangeError; a helper's main thread grows its stack on demand, the kernel refuses what V8 believes it has, and the helper dies of SIGSEGV (the stream host's helper keeps a worker: there the case runs)
// expect: exception
// message: Maximum call stack
// hosts: process,confined,stream
// requires: prlimit
// known-bug[process]: the main thread's stack grows under RLIMIT_STACK, which the program may lower: the helper is killed by SIGSEGV (worker-exit) instead of throwing a RangeError
// known-bug[confined]: the main thread's stack grows under RLIMIT_STACK, which the program may lower: the helper is killed by SIGSEGV (worker-exit) instead of throwing a RangeError
// known-bug[stream]
const { execFileSync } = await import('node:child_process')
execFileSync('prlimit', [`--pid=${process.pid}`, '--stack=1048576:'])
const recurse = (n) => recurse(n + 1) + 1
recurse(0)
