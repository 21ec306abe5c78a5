// attack: the worker's inbox stops being read while the program forges binding calls, so every reply would wait in the host (a call counts as pending until its reply is written)
// expect: protocol
// message: maxPendingCalls
// hosts: process, confined
// prelude: hijack
const inbox = process._getActiveHandles().find((handle) => handle?.constructor?.name === 'Socket')
inbox.pause()
const args = ['x'.repeat(4096)]
for (let id = 2; id < 2002; id++) forge({ type: 'call', run: runId, id, global: 'tools', name: 'echo', args })
await hang()
