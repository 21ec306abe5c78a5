// attack: forged subprocess report naming the process that hosts the worker
// expect: protocol
// prelude: hijack
forge({ type: 'spawned', run: runId, pid: process.pid })
await hang()
