// attack: forged failure whose message is not a string
// expect: protocol
// prelude: hijack
forge({ type: 'failed', run: runId, kind: 'exception', message: 42 })
await hang()
