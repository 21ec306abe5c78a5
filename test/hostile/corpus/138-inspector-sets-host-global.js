// attack: an inspector session on the main thread sets a global there, where the host's code would see it
// expect: ok
// expect[thread]: exception
// message[thread]: isolation: 'process'
// timeout: 15000
// prelude: main-thread
// value: "evaluated"
/* The runner checks after every case that the host has no global ptcCorpusPwned: on the
   process host the main thread reached is the helper's own. */
await evaluateOnMainThread('globalThis.ptcCorpusPwned = true')
/* completion */ 'evaluated'
