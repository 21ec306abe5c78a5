// attack: a forged batch of binding calls (calls) of 20 000 000 entries, under the default budgets (a message may take 145 MiB): the host built the whole list before it dispatched the first call, each counted against maxPendingCalls only then, 360-410 MB of its heap and 1-1.4 s of its thread per message here
// expect: protocol
// message: more than 128 binding calls are pending at once \(maxPendingCalls\)
// prelude: hijack
// config: {"maxOutputBytes": 67108864, "maxPendingCallBytes": 16777216, "maxPendingCalls": 128, "maxOldGenerationSizeMb": 512, "maxMemoryMb": 1024}
// heap: 128
// timeout: 30000
const calls = `[${'0,'.repeat(19_999_999)}0]`
forgeText(`{"type":"calls","run":${runId},"calls":${calls}}`)
await hang()
