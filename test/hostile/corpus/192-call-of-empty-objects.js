// attack: a legitimate call of 300 000 empty objects (0.9 MB of JSON, within maxPendingCallBytes of 1 MiB): it crossed as ten times that in wire tokens, past the frame cap, and failed the run as protocol; its encoding must stay near its JSON and the tool must get it
// expect: ok
// value: 900001
// bystander: 4000
// timeout: 20000
const args = Array.from({ length: 300_000 }, () => ({}))
await tools.beside('__MARKER__')
/* completion */ await tools.measure(args)
