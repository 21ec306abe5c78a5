// attack: a forged message whose run number is an object that cannot be turned into a string, so the host's own description of the violation would throw inside its channel reader
// expect: protocol
// prelude: hijack
forge({ type: 'done', run: { toString: 1, valueOf: 1 } })
forge({ type: { toString: 1 }, run: runId })
await hang()
