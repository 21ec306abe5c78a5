// attack: a small tree of nested worker threads, each spinning forever, left running after the program returns
// expect: ok
// known-bug[process]: on Node 24 and later each nested worker reserves about 528 MiB, which the memory budget (maxMemoryMb) counts, so the environment may not survive for the next run
// known-bug[confined]: on Node 24 and later each nested worker reserves about 528 MiB, which the memory budget (maxMemoryMb) counts, so the environment may not survive for the next run
// expect[thread]: exception
// message[thread]: may not start worker threads
// value: "spawned"
const { Worker } = await import('node:worker_threads')
const source = `
  const { Worker, workerData } = require('node:worker_threads')
  if (workerData.depth > 0) for (let i = 0; i < 2; i++) new Worker(workerData.source, { eval: true, workerData: { ...workerData, depth: workerData.depth - 1 } })
  for (;;) {}`
const root = new Worker(source, { eval: true, workerData: { source, depth: 1 } })
await new Promise((resolve) => root.once('online', resolve))
/* completion */ 'spawned'
