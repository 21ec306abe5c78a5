// attack: a message on the worker's parentPort, which the runtime never uses
// expect: protocol
const { parentPort } = await import('node:worker_threads')
parentPort.postMessage({ type: 'done', run: 1, value: ['from parentPort'] })
await new Promise(() => {})
