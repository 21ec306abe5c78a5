// attack: forged binding call reusing the id of the call that already completed
// expect: protocol
// prelude: hijack
forge({ type: 'call', run: runId, id: 1, global: 'tools', name: 'echo', args: ['again'] })
await hang()
