// attack: the program reads the first bytes of a binding reply from the worker's inbox descriptor (5) before the worker can, so the worker sees a torn frame
// expect: protocol
// hosts: process, confined
const { readSync } = await import('node:fs')
const pending = tools.delay(1)
await Promise.resolve() // the call leaves in a microtask
const head = Buffer.alloc(5)
// The worker's event loop cannot read while this loop runs on its thread.
for (const until = Date.now() + 2000; Date.now() < until;) {
  try {
    if (readSync(5, head, 0, 5) > 0) break
  } catch (error) {
    if (error.code !== 'EAGAIN') throw error
  }
}
await pending
/* completion */ 'unnoticed'
