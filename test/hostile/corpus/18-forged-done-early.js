// attack: a well-formed forged completion sent before the program finishes (it can only lie about itself)
// expect: ok
// value: 7
// prelude: hijack
forge({ type: 'done', run: runId, value: 7 })
await hang()
