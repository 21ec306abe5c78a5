// attack: a forged run message delivered to the worker side, replacing the run in progress
// expect: exception
// prelude: hijack
inject({ type: 'run', run: runId, program: null, namespaces: [], cwd: '/', maxOutputBytes: 1e9, discardCompletion: false })
await hang()
