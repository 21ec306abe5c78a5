// attack: genuine binding calls flood the host with more pending calls than maxPendingCalls
// expect: protocol
// message: more than 16 binding calls
await Promise.all(Array.from({ length: 64 }, () => tools.hang()))
