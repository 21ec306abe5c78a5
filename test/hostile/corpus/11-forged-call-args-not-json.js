// attack: forged binding call whose arguments are not JSON at all (a bare word where a value goes)
// expect: protocol
// prelude: hijack
forgeText(`{"type":"call","run":${runId},"id":2,"global":"tools","name":"echo","args":undefined}`)
await hang()
