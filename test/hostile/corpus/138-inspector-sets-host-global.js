// attack: an inspector session on the main thread sets a global there, where the host's code would see it
// expect: ok
// expect[thread]: exception
// message[thread]: isolation: 'process'
// timeout: 15000
// value: "evaluated"
/* The runner checks after every case that the host has no global ptcCorpusPwned: on the
   process host the main thread reached is the helper's own. */
const inspector = await import('node:inspector')
/* Node 26 sometimes leaves a reply undelivered until the main thread wakes for something else:
   an attacker simply asks again on a new session. */
let evaluated = false
for (let attempt = 0; attempt < 10 && !evaluated; attempt++) {
  const session = new inspector.Session()
  session.connectToMainThread()
  evaluated = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(false), 1000)
    session.post('Runtime.evaluate', { expression: 'globalThis.ptcCorpusPwned = true' }, (error) => {
      clearTimeout(timer)
      if (error) reject(error)
      else resolve(true)
    })
  })
  session.disconnect()
}
/* completion */ evaluated ? 'evaluated' : 'the main thread never answered'
