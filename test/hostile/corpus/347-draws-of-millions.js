// attack: a durable run's forged report of recorded values whose clock list holds 20 000 000 values, under the default budgets (a message may take 145 MiB): the host checked each list against MAX_DRAWS (10 000) only once it had built it whole, 360-460 MB of its heap and 0.9-1.7 s of its thread per message here
// expect: protocol
// message: "clock" holds more than 10000 values, more than a durable run records \(MAX_DRAWS\)
// prelude: hijack
// formats: function-body,script
// durable: yes
// config: {"maxOutputBytes": 67108864, "maxPendingCallBytes": 16777216, "maxOldGenerationSizeMb": 512, "maxMemoryMb": 1024}
// heap: 128
// timeout: 30000
const clock = `[${'0,'.repeat(19_999_999)}0]`
forgeText(`{"type":"draws","run":${runId},"clock":${clock},"random":[],"bytes":[]}`)
await hang()
