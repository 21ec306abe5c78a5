// attack: opens a debugger listener, to stay reachable after the run
// expect: ok
// expect[thread]: exception
// message[thread]: isolation: 'process'
// value: "listening"
/* The runner checks after every case that no debugger listens in the host. On the process host
   the listener belongs to the helper: it reaches only this environment, and ends with it. */
const inspector = await import('node:inspector')
inspector.open(0, '127.0.0.1')
/* completion */ inspector.url() ? 'listening' : 'closed'
