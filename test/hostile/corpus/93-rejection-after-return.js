// attack: an unhandled rejection from a timer that fires after the program returned, between runs
// expect: ok
// value: "returned"
// pause: 300
setTimeout(() => Promise.reject(new Error('late rejection')), 5)
/* completion */ 'returned'
