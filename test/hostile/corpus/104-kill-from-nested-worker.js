// attack: a nested worker thread (with an unpatched process object) signals the hosting process
// expect: worker-exit
// expect[thread]: exception
// message[thread]: may not start worker threads
const { Worker } = await import('node:worker_threads')
new Worker("process.kill(process.pid, 'SIGKILL')", { eval: true })
await new Promise(() => {})
