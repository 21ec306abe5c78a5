// attack: forged binding call whose args are an object instead of a token list
// expect: protocol
// prelude: hijack
forge({ type: 'call', run: runId, id: 2, global: 'tools', name: 'echo', args: { length: 1, 0: 'x' } })
await hang()
