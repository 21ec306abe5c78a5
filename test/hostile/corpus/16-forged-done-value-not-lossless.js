// attack: forged completion whose value JSON text cannot carry losslessly (a number past the largest double)
// expect: protocol
// prelude: hijack
forgeText(`{"type":"done","run":${runId},"value":1e999}`)
await hang()
