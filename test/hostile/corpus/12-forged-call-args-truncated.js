// attack: forged binding call whose token list announces three elements and carries one
// expect: protocol
// prelude: hijack
forge({ type: 'call', run: runId, id: 2, global: 'tools', name: 'echo', args: [{ kind: 'array', length: 3 }, 1] })
await hang()
