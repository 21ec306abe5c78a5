// attack: forged completion addressed to a different run
// expect: protocol
// prelude: hijack
forge({ type: 'done', run: runId + 1, value: ['stolen'] })
await hang()
