// attack: a nested worker, created without resourceLimits, allocates well past the environment's heap limit
// expect: ok
// expect[thread]: exception
// message[thread]: may not start worker threads
// value: "capped"
// timeout: 15000
// known-bug[confined]: nested workers do not inherit the environment's maxOldGenerationSizeMb (the nested heap reached 160 MB under a 64 MB limit)
const { Worker } = await import('node:worker_threads')
const nested = new Worker(`
  const keep = []
  for (let i = 0; i < 5; i++) keep.push(new Array(2 ** 22).fill(i))
  require('node:worker_threads').parentPort.postMessage('allocated')`, { eval: true })
const outcome = await new Promise((resolve) => {
  nested.once('message', resolve)
  nested.once('error', () => resolve('capped'))
})
/* completion */ outcome
