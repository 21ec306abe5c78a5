// attack: a timer left by this run calls process.exit as soon as the owner's next run has started
// expect: ok
// value: "returned"
// follow-up: worker-exit
const installed = tools
setInterval(() => { if (globalThis.tools !== installed) process.exit(4) }, 1)
/* completion */ 'returned'
