// attack: forged completion with no run field at all
// expect: protocol
// prelude: hijack
forge({ type: 'done', value: ['anonymous'] })
await hang()
