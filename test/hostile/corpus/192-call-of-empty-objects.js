// attack: a legitimate call of 300 000 empty objects (0.9 MB of JSON, within maxPendingCallBytes of 1 MiB): it crossed as ten times that in wire tokens, past the frame cap, and failed the run as protocol; its encoding must stay near its JSON and the tool must get it
// expect: ok
// value: 900001
// bystander: 4000
// timeout: 20000
// config: {"maxOldGenerationSizeMb": 128}
// alone[thread]: it measures the host's event loop, which other cases' work would colour
// alone[process]: it measures the host's event loop, which other cases' work would colour
// alone[confined]: it measures the host's event loop, which other cases' work would colour
// alone[stream]: it measures the host's event loop, which other cases' work would colour
const args = Array.from({ length: 300_000 }, () => ({}))
await tools.beside('__MARKER__')
/* completion */ await tools.measure(args)
