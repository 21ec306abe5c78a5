// attack: forged completion whose token list is structurally wrong (unknown container kind)
// expect: invalid-output
// prelude: hijack
forge({ type: 'done', run: runId, value: [{ kind: 'map', entries: 1 }, 'x'] })
await hang()
