// attack: an inspector session on the main thread evaluates code there and reads the host's environment secret
// expect: ok
// expect[thread]: exception
// message[thread]: isolation: 'process'
// timeout: 15000
// value: "no secret"
/* On the process host the main thread is the helper's, whose environment holds none of the
   host's; the runner also checks that the secret appears nowhere in any result. */
const inspector = await import('node:inspector')
/* Node 26 sometimes leaves a reply undelivered until the main thread wakes for something else:
   an attacker simply asks again on a new session. */
const evaluate = async (expression) => {
  for (let attempt = 0; attempt < 10; attempt++) {
    const session = new inspector.Session()
    session.connectToMainThread()
    const reply = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve(undefined), 1000)
      session.post('Runtime.evaluate', { expression, returnByValue: true }, (error, result) => {
        clearTimeout(timer)
        if (error) reject(error)
        else resolve(result)
      })
    })
    session.disconnect()
    if (reply) return reply.result.value
  }
  throw new Error('the main thread never answered')
}
const secret = await evaluate('process.env.PTC_CORPUS_SECRET')
/* completion */ secret === undefined ? 'no secret' : secret
