// attack: a timer that throws after the program returned, between runs
// expect: ok
// value: "returned"
// pause: 300
setTimeout(() => { throw new Error('late throw') }, 5)
/* completion */ 'returned'
