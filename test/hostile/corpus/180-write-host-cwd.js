// attack: writes a file into the host's working directory, beside the host's own code
// expect: ok
// known-limit[thread]: a worker thread writes whatever the host user can
// known-limit[process]: with sandbox: 'none' the deployer gives programs the host user's files
// value: "EROFS"
const fs = await import('node:fs')
let code = 'written'
try {
  fs.writeFileSync('__HOST_CWD__/planted-by-program.js', 'process.exit(1)\n')
} catch (error) {
  code = error.code
}
/* completion */ code
