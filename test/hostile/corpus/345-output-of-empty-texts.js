// attack: well-formed output messages, each a list of 2 000 000 empty texts, under the default budgets: an empty text cost nothing against maxOutputBytes, and the host built every list (40 of them held it for seconds, 300-440 MB)
// expect: protocol
// prelude: hijack
// config: {"maxOutputBytes": 67108864, "maxPendingCallBytes": 16777216, "maxOldGenerationSizeMb": 192, "maxMemoryMb": 512}
// bystander: 4000
// timeout: 30000
// alone[thread]: it measures the host's event loop, which other cases' work would colour
// alone[process]: it measures the host's event loop, which other cases' work would colour
// alone[confined]: it measures the host's event loop, which other cases' work would colour
// alone[stream]: it measures the host's event loop, which other cases' work would colour
const items = `[${'"",'.repeat(2_000_000)}""]`
await tools.beside('__MARKER__')
for (let i = 0; i < 40; i++) forgeText(`{"type":"output","run":${runId},"items":${items}}`)
await hang()
