// attack: a million well-formed output messages of no item at all: each cost nothing against maxOutputBytes, and the host read every one
// expect: protocol
// prelude: hijack
// timeout: 30000
const empty = `{"type":"output","run":${runId},"items":[]}`
for (let i = 0; i < 1_000_000; i++) forgeText(empty)
await hang()
