// attack: a nested worker (with an unpatched child_process) starts a subprocess the host never hears about
// expect: ok
// expect[thread]: exception
// message[thread]: may not start worker threads
// value: "spawned"
// known-bug[confined+repl]: a retained confined environment kills only the process groups it recorded at settlement; a subprocess started by a nested worker outlives the run (until the environment is released)
// known-bug[confined+scoped-repl]: a retained confined environment kills only the process groups it recorded at settlement; a subprocess started by a nested worker outlives the run (until the environment is released)
const { Worker } = await import('node:worker_threads')
const nested = new Worker(`
  require('node:child_process').spawn('sleep', ['__SLEEP__'], { stdio: 'ignore' })
  require('node:worker_threads').parentPort.postMessage('spawned')`, { eval: true })
/* completion */ await new Promise((resolve) => nested.once('message', resolve))
