// attack: a forged frame of 40 MB, one line of valid JSON whose message is a list of 13 million empty objects, under the default budgets (a frame may then be about 145 MiB long): the host buffered the line and parsed it whole on its thread before checking it (8.6 s held, 1.2 GB)
// expect: protocol
// prelude: hijack
// config: {"maxOutputBytes": 67108864, "maxPendingCallBytes": 16777216, "maxOldGenerationSizeMb": 192, "maxMemoryMb": 512}
// bystander: 4000
// timeout: 30000
const frame = `[${'{},'.repeat(13_000_000)}{}]`
await tools.beside('__MARKER__')
forgeText(frame)
await hang()
