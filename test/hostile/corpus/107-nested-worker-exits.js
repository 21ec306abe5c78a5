// attack: a nested worker calls process.exit; only the nested worker may end
// expect: ok
// expect[thread]: exception
// message[thread]: may not start worker threads
// value: 5
const { Worker } = await import('node:worker_threads')
const nested = new Worker('process.exit(5)', { eval: true })
/* completion */ await new Promise((resolve) => nested.once('exit', resolve))
