// attack: forged binding calls whose ids skip ahead and then go back
// expect: protocol
// prelude: hijack
forge({ type: 'call', run: runId, id: 5, global: 'tools', name: 'echo', args: [5] })
forge({ type: 'call', run: runId, id: 2, global: 'tools', name: 'echo', args: [2] })
await hang()
