// attack: process.exit with a non-zero code
// expect: worker-exit
// message: exit code 7
process.exit(7)
