// attack: a nested worker, created without resourceLimits, allocates well past the environment's heap limit
// expect: ok
// expect[thread]: exception
// known-bug[process]: a nested worker is capped by the environment's memory budget (maxMemoryMb), not by maxOldGenerationSizeMb, so whether its 160 MB fits depends on GC timing
// known-bug[confined]: a nested worker is capped by the environment's memory budget (maxMemoryMb), not by maxOldGenerationSizeMb, so whether its 160 MB fits depends on GC timing
// message[thread]: may not start worker threads
// value: "capped"
// timeout: 15000
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
