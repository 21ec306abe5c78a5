// attack: forged completion whose value repeats a key (JSON.parse would keep the last; lossless JSON has one)
// expect: protocol
// prelude: hijack
forgeText(`{"type":"done","run":${runId},"value":{"a":1,"a":2}}`)
await hang()
