// attack: forged binding call whose arguments end in the middle of a value
// expect: protocol
// prelude: hijack
forgeText(`{"type":"call","run":${runId},"id":2,"global":"tools","name":"echo","args":[1,2`)
await hang()
