// attack: forged failure claiming a host-only kind (timeout) to mislead the caller
// expect: protocol
// prelude: hijack
forge({ type: 'failed', run: runId, kind: 'timeout', message: 'forged timeout' })
await hang()
