// attack: forged completion with a "__proto__" key, which must stay an own key on the host
// expect: ok
// value: {"__proto__": {"polluted": true}}
// prelude: hijack
forge({ type: 'done', run: runId, value: [{ kind: 'object', keys: ['__proto__'] }, { kind: 'object', keys: ['polluted'] }, true] })
await hang()
