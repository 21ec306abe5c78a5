// attack: lowers its own process's stack limit from a subprocess (prlimit), under the `--stack-size` V8 was given, then recurses: a worker's stack is allocated when it starts, so there the recursion ends in a RangeError; a helper's main thread grows its stack on demand, so the confined helper's seccomp filter refuses prlimit64 on another process (the helper without bubblewrap, which has the user's rights, is not asked to hold this)
// expect: exception
// message: Maximum call stack
// hosts: confined,stream
// requires: prlimit
const { execFileSync } = await import('node:child_process')
try {
  execFileSync('prlimit', [`--pid=${process.pid}`, '--stack=1048576:'], { stdio: 'ignore' })
} catch {
  // refused (EPERM) where the seccomp filter holds
}
const recurse = (n) => recurse(n + 1) + 1
recurse(0)
