// attack: a forged call whose argument is one list of 5 500 000 empty lists (16.5 MB of [],), within the default 16 MiB of arguments in flight: a list holds no key, so it passed the reader's bound of keys, and the host built it whole (about 240 MB of its heap) before any check of calls could refuse it; the reader must refuse the line at its 2 097 153rd list, naming the bound
// expect: protocol
// message: "args" holds more than 2097152 values in all, with the message's other program data
// prelude: hijack
// formats: function-body
// config: {"maxPendingCallBytes": 16777216, "maxOldGenerationSizeMb": 192, "maxMemoryMb": 512}
// heap: 320
// timeout: 30000
forgeText(`{"type":"call","run":${runId},"id":2,"global":"tools","name":"hang","args":[${'[],'.repeat(5_499_999)}[]]}`)
await hang()
