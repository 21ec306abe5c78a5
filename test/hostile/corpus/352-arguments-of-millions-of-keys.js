// attack: a binding call whose argument is one object of 1 500 000 distinct keys, which the default 16 MiB of arguments in flight allow: the host built it as it read the call (V8 builds an object of millions of keys in time that grows faster than its keys), 1.9 s of its thread and a stall of 0.3 s here
// expect: exception
// message: tools\.delay: the arguments hold an object of more than 262144 keys at \$, and the host reads at most 262144 keys in one object
// formats: function-body,script
// config: {"maxPendingCallBytes": 16777216, "maxOldGenerationSizeMb": 512, "maxMemoryMb": 1024}
// heap: 64
// busy: 400
// timeout: 30000
const wide = {}
for (let i = 0; i < 1_500_000; i++) wide[`k${i.toString(36)}`] = 0
await tools.delay(wide)
