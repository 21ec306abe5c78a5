// attack: forged calls that skip the worker's own checks, held by a tool that never answers: one of 2 000 001 lists (6 MB of JSON, within the default 16 MiB of arguments in flight), then one of 100 001: a list costs the host 40-60 bytes however short its JSON, and only bytes bounded what the host held for a run's calls in flight (eight calls of lists nested a million deep took it to 1.6 GB); the second must be refused, naming the bound of 2 097 152 values in flight
// expect: ok
// prelude: hijack
// formats: function-body
// config: {"maxPendingCallBytes": 16777216, "maxOldGenerationSizeMb": 192, "maxMemoryMb": 512}
// timeout: 30000
// value: "tools.hang was not called: its arguments hold 100001 values, which would bring those of this run's calls in flight over 2097152 (lists, objects, strings, numbers, booleans and nulls), the most the host holds for them; await calls before making more, or pass fewer values"
const refusalIn = (message) => (message?.type === 'replies' ? message.replies : [message]).find((reply) => reply?.type === 'reply' && reply.ok === false)?.message
let refused
if ('__HOST__' === 'thread') {
  refused = new Promise((resolve) => {
    hybridProto[hybridKey] = function (...args) {
      const refusal = refusalIn(args[0])
      if (this === port && refusal) resolve(refusal)
      return hybridDispatch.apply(this, args)
    }
  })
}
const lists = (count) => `[${'[],'.repeat(count - 2)}[]]`
forgeText(`{"type":"call","run":${runId},"id":2,"global":"tools","name":"hang","args":${lists(2_000_001)}}`)
forgeText(`{"type":"call","run":${runId},"id":3,"global":"tools","name":"hang","args":${lists(100_001)}}`)
// In a helper the host's replies reach the worker on descriptor 5: read them there first (the
// host reads 6 MB before it answers, which a loaded machine may take more than one wait for).
for (let waits = 0; refused === undefined; waits++) {
  try {
    refused = refusalIn(stealFrame())
  } catch (error) {
    if (waits === 3) throw error
  }
}
const message = await refused
hybridProto[hybridKey] = hybridDispatch
/* completion */ message
