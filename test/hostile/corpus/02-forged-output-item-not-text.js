// attack: forged output message with a number and a nested list among its items
// expect: protocol
// prelude: hijack
forge({ type: 'output', run: runId, items: ['fine', 42, ['nested']] })
await hang()
