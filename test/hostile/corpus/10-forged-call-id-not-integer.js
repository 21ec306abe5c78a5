// attack: forged binding call with a fractional id, then a string id
// expect: protocol
// prelude: hijack
forge({ type: 'call', run: runId, id: 1.5, global: 'tools', name: 'echo' })
forge({ type: 'call', run: runId, id: '2', global: 'tools', name: 'echo' })
await hang()
