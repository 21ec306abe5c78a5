// attack: forged message of a type the protocol does not have
// expect: protocol
// prelude: hijack
forge({ type: 'reply', run: runId, id: 1, ok: true, value: [1] })
await hang()
