// attack: well-formed forged exception claiming the environment initializer failed
// expect: exception
// message: ^forged failure$
// prelude: hijack
forge({ type: 'failed', run: runId, kind: 'exception', message: 'forged failure', initializer: true })
await hang()
