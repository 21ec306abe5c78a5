// attack: compiles a shared library and loads it with process.dlopen, to run native code in the process
// expect: exception
// message: did not self-register
// message[thread]: isolation: 'process'
// requires: cc
// timeout: 20000
/* Loading a library runs its constructor before Node looks for an addon in it: on the process
   host that native code runs in the helper only, and Node then refuses the library. */
const fs = await import('node:fs')
const { execFileSync } = await import('node:child_process')
const directory = fs.mkdtempSync('/tmp/ptc-corpus-native-')
fs.writeFileSync(`${directory}/library.c`, '__attribute__((constructor)) static void loaded(void) {}\n')
// The compiler finds its own parts through PATH, which a program's environment lacks.
execFileSync('cc', ['-shared', '-fPIC', '-o', `${directory}/library.so`, `${directory}/library.c`], { env: { PATH: '/usr/bin:/bin' } })
try {
  process.dlopen({ exports: {} }, `${directory}/library.so`)
} finally {
  fs.rmSync(directory, { recursive: true, force: true })
}
