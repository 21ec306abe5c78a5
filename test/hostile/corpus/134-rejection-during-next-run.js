// attack: a timer left by this run rejects unhandled while the owner's next run is in progress
// expect: ok
// value: "returned"
// follow-up: exception
/* The failure lands in the run that is current when it happens; its message names the run
   whose code failed ("program of run 1"). */
const installed = tools
const watch = setInterval(() => {
  if (globalThis.tools === installed) return
  clearInterval(watch)
  Promise.reject(new Error('left behind'))
}, 1)
/* completion */ 'returned'
