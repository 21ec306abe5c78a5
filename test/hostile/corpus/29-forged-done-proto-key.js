// attack: forged completion with a "__proto__" key, which must stay an own key on the host
// expect: ok
// value: {"__proto__": {"polluted": true}}
// prelude: hijack
forgeText(`{"type":"done","run":${runId},"value":{"__proto__":{"polluted":true}}}`)
await hang()
