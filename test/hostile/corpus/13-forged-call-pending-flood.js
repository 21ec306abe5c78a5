// attack: forged calls to a never-resolving binding, well past maxPendingCalls
// expect: protocol
// message: maxPendingCalls
// prelude: hijack
for (let id = 2; id < 200; id++) forge({ type: 'call', run: runId, id, global: 'tools', name: 'hang' })
await hang()
