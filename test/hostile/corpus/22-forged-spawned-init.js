// attack: forged subprocess report for pid 1 so the host would kill init's process tree
// expect: protocol
// known-limit[stream]: the host cannot read a remote environment's processes, so it adopts every report; it never kills by pid, so a forged report changes nothing
// prelude: hijack
forge({ type: 'spawned', run: runId, pid: 1 })
await hang()
