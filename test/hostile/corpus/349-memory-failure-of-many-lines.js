// attack: a forged failure that reads as the kernel refusing an allocation, followed by 30 million empty lines: the host split the whole message into lines to keep the first (a 60 MB frame made an array of 30 million strings, about a gigabyte of the host's heap)
// expect: worker-exit
// expect[thread]: exception
// prelude: hijack
// config: {"maxOutputBytes": 67108864, "maxPendingCallBytes": 16777216, "maxOldGenerationSizeMb": 192, "maxMemoryMb": 512}
// heap: 200
// timeout: 30000
forgeText(`{"type":"failed","run":${runId},"kind":"exception","message":"RangeError: Array buffer allocation failed${'\\n'.repeat(30_000_000)}"}`)
await hang()
