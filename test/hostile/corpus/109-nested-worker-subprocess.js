// attack: a nested worker (with an unpatched child_process) starts a subprocess the host never hears about
// expect: ok
// expect[thread]: exception
// message[thread]: may not start worker threads
// value: "spawned"
const { Worker } = await import('node:worker_threads')
const nested = new Worker(`
  require('node:child_process').spawn('sleep', ['__SLEEP__'], { stdio: 'ignore' })
  require('node:worker_threads').parentPort.postMessage('spawned')`, { eval: true })
/* completion */ await new Promise((resolve) => nested.once('message', resolve))
