// attack: a message on the worker's parentPort, which the runtime never uses (the worker's ports: a process tier's helper runs the program on its main thread, with neither a worker nor its ports)
// hosts: thread, stream
// expect: protocol
const { parentPort } = await import('node:worker_threads')
parentPort.postMessage({ type: 'done', run: 1, value: ['from parentPort'] })
await new Promise(() => {})
