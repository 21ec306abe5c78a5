// attack: forged binding calls that would reach Object.prototype if names were looked up loosely
// expect: protocol
// prelude: hijack
forge({ type: 'call', run: runId, id: 2, global: 'tools', name: '__proto__' })
forge({ type: 'call', run: runId, id: 3, global: 'tools', name: 'constructor' })
forge({ type: 'call', run: runId, id: 4, global: 'hasOwnProperty', name: 'call' })
await hang()
