// attack: an inspector session on the main thread sets a global there, where the host's code would see it
// expect: ok
// expect[thread]: exception
// message[thread]: isolation: 'process'
// value: "evaluated"
/* The runner checks after every case that the host has no global ptcCorpusPwned: on the
   process host the main thread reached is the helper's own. */
const inspector = await import('node:inspector')
const session = new inspector.Session()
session.connectToMainThread()
await new Promise((resolve, reject) => {
  session.post('Runtime.evaluate', { expression: 'globalThis.ptcCorpusPwned = true' }, (error) => (error ? reject(error) : resolve()))
})
session.disconnect()
/* completion */ 'evaluated'
