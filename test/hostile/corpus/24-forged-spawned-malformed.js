// attack: forged subprocess report with a negative pid (a process group on kill)
// expect: protocol
// prelude: hijack
forge({ type: 'spawned', run: runId, pid: -1 })
await hang()
