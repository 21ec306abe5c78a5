// `evaluateOnMainThread(expression)` evaluates `expression` on the process's main thread through
// an inspector session and resolves its result. Node 26 sometimes leaves a reply undelivered until
// the main thread wakes for something else, so like an attacker it asks again on a new session
// after a second without one, ten times at most. A process tier's helper runs the program on the
// main thread itself: its session connects to its own thread.
const evaluateOnMainThread = async (expression) => {
  const inspector = await import('node:inspector')
  const { isMainThread } = await import('node:worker_threads')
  for (let attempt = 0; attempt < 10; attempt++) {
    const session = new inspector.Session()
    if (isMainThread) session.connect()
    else session.connectToMainThread()
    const reply = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve(undefined), 1000)
      session.post('Runtime.evaluate', { expression, returnByValue: true }, (error, result) => {
        clearTimeout(timer)
        if (error) reject(error)
        else resolve(result)
      })
    })
    session.disconnect()
    if (reply) return reply.result
  }
  throw new Error('the main thread never answered')
}
