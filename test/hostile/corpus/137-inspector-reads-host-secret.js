// attack: an inspector session on the main thread evaluates code there and reads the host's environment secret
// expect: ok
// expect[thread]: exception
// message[thread]: isolation: 'process'
// value: "no secret"
/* On the process host the main thread is the helper's, whose environment holds none of the
   host's; the runner also checks that the secret appears nowhere in any result. */
const inspector = await import('node:inspector')
const session = new inspector.Session()
session.connectToMainThread()
const evaluate = (expression) => new Promise((resolve, reject) => {
  session.post('Runtime.evaluate', { expression, returnByValue: true }, (error, reply) => (error ? reject(error) : resolve(reply.result.value)))
})
const secret = await evaluate('process.env.PTC_CORPUS_SECRET')
session.disconnect()
/* completion */ secret === undefined ? 'no secret' : secret
