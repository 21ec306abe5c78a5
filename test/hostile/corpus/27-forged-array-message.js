// attack: forged array that carries the fields of a completion
// expect: protocol
// prelude: hijack
forge(Object.assign(['done'], { type: 'done', run: runId }))
await hang()
