// attack: forged output message whose items field is a string, not a list
// expect: protocol
// prelude: hijack
forge({ type: 'output', run: runId, items: 'not a list' })
await hang()
