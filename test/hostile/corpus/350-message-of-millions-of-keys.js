// attack: a forged output message of 4 000 000 distinct keys, under the default budgets (a message may take 145 MiB): the host built the whole object before it looked at the message (V8 builds an object of millions of keys in time that grows faster than its keys), 370-430 MB of its heap per message here, and for a million keys 1.2 s of its CPU and a stall of 0.3 s
// expect: protocol
// message: a message holds more than 16 fields, more than any of the protocol \(MAX_PROTOCOL_KEYS\)
// prelude: hijack
// formats: function-body,script
// config: {"maxOutputBytes": 67108864, "maxPendingCallBytes": 16777216, "maxOldGenerationSizeMb": 512, "maxMemoryMb": 1024}
// heap: 128
// timeout: 30000
const keys = []
for (let i = 0; i < 4_000_000; i++) keys.push(`"k${i.toString(36)}":0`)
forgeText(`{"type":"output","run":${runId},"items":[],${keys.join(',')}}`)
await hang()
