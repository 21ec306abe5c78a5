// attack: forged completion whose value is a bare string instead of a token list
// expect: protocol
// prelude: hijack
forge({ type: 'done', run: runId, value: 'not tokens' })
await hang()
