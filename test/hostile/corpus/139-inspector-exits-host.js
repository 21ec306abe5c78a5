// attack: an inspector session on the main thread makes it call process.exit(42)
// expect: worker-exit
// expect[thread]: exception
// message[thread]: isolation: 'process'
/* On the process host only the helper exits; the host reports the environment's exit. */
const inspector = await import('node:inspector')
/* A process tier's helper runs the program on the main thread itself. */
const { isMainThread } = await import('node:worker_threads')
/* Node 26 sometimes leaves a message undelivered until the main thread wakes for something
   else: an attacker simply sends it again on a new session. */
for (;;) {
  const session = new inspector.Session()
  if (isMainThread) session.connect()
  else session.connectToMainThread()
  session.post('Runtime.evaluate', { expression: 'process.exit(42)' })
  await new Promise((resolve) => setTimeout(resolve, 1000))
}
