// attack: a legitimate call of 1.3 million empty objects (3.9 MB of JSON) with maxOutputBytes 1 000 000 and the default maxPendingCallBytes (16 MiB): 35 MB of wire tokens held the host 1.8 s and failed the run as protocol; the tool must get it, and the host stay responsive
// expect: ok
// value: 3900001
// formats: function-body
// config: {"maxOutputBytes": 1000000, "maxPendingCallBytes": 16777216, "maxOldGenerationSizeMb": 512, "maxMemoryMb": 1536}
// bystander: 4000
// timeout: 30000
const args = Array.from({ length: 1_300_000 }, () => ({}))
await tools.beside('__MARKER__')
/* completion */ await tools.measure(args)
