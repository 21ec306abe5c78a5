// attack: forged subprocess report for pid 1 so the host would kill init's process tree
// expect: protocol
// prelude: hijack
forge({ type: 'spawned', run: runId, pid: 1 })
await hang()
