// attack: process.exit from a callback right after the program returned; the environment dies between runs
// expect: ok
// value: "returned"
// pause: 300
// follow-up: fresh
setImmediate(() => process.exit(3))
/* completion */ 'returned'
