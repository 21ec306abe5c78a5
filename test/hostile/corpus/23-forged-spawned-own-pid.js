// attack: forged subprocess report naming the process that hosts the worker
// expect: protocol
// known-limit[stream]: the host cannot read a remote environment's processes, so it adopts every report; it never kills by pid, so a forged report changes nothing
// prelude: hijack
forge({ type: 'spawned', run: runId, pid: process.pid })
await hang()
