// attack: the main thread's NodeWorker domain attaches to every worker of the process, to read or rewrite other environments
// expect: ok
// expect[thread]: exception
// message[thread]: isolation: 'process'
// value: 0
// timeout: 15000
/* Counts the workers it reached that are not its own (each answers with its own random mark).
   On the process host the helper hosts this environment's worker alone. */
const inspector = await import('node:inspector')
/* A process tier's helper runs the program on the main thread itself. */
const { isMainThread } = await import('node:worker_threads')
globalThis.ptcCorpusMark = String(Math.random())
const session = new inspector.Session()
if (isMainThread) session.connect()
else session.connectToMainThread()
/* A reply that never comes (Node 26 sometimes drops one under load) reaches nothing: give up on it. */
const post = (method, params) => new Promise((resolve, reject) => {
  const timer = setTimeout(resolve, 2000)
  session.post(method, params, (error, result) => {
    clearTimeout(timer)
    if (error) reject(error)
    else resolve(result)
  })
})
const attached = []
session.on('NodeWorker.attachedToWorker', ({ params }) => attached.push(params.sessionId))
await post('NodeWorker.enable', { waitForDebuggerOnStart: false })
await new Promise((resolve) => setTimeout(resolve, 300))
const evaluateIn = (sessionId) => new Promise((resolve) => {
  const timer = setTimeout(() => resolve(undefined), 1000)
  session.on('NodeWorker.receivedMessageFromWorker', ({ params }) => {
    if (params.sessionId !== sessionId) return
    const message = JSON.parse(params.message)
    if (message.id === 1) {
      clearTimeout(timer)
      resolve(message.result?.result?.value)
    }
  })
  const message = { id: 1, method: 'Runtime.evaluate', params: { expression: 'globalThis.ptcCorpusMark', returnByValue: true } }
  post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify(message) })
})
let foreign = 0
for (const sessionId of attached) if ((await evaluateIn(sessionId)) !== globalThis.ptcCorpusMark) foreign++
await post('NodeWorker.disable', {})
session.disconnect()
/* completion */ foreign
