// attack: returns at once, leaving a timer that spins forever in the environment
// expect: ok
// value: "returned"
// follow-up: timeout
// follow-up-timeout: 500
setTimeout(() => { for (;;) {} }, 0)
/* completion */ 'returned'
