// attack: an inspector session on the main thread makes it call process.exit(42)
// expect: worker-exit
// expect[thread]: exception
// message[thread]: isolation: 'process'
/* On the process host only the helper exits; the host reports the environment's exit. */
const inspector = await import('node:inspector')
const session = new inspector.Session()
session.connectToMainThread()
session.post('Runtime.evaluate', { expression: 'process.exit(42)' })
await new Promise(() => {})
