// attack: forged calls that skip the worker's own check of the budget of arguments in flight (1 MiB here), passing 512 KiB each to a tool that never answers
// expect: ok
// prelude: hijack
// value: true
/* The worker refuses an over-budget call before copying it out, but a program can post calls
   itself: the host counts again and refuses the one that would pass maxPendingCallBytes. */
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
const big = 'x'.repeat(2 ** 19)
for (let id = 2; id < 5; id++) forge({ type: 'call', run: runId, id, global: 'tools', name: 'hang', args: [big] })
// In a helper the host's replies reach the worker on descriptor 5: read them there first.
while (refused === undefined) refused = refusalIn(stealFrame())
const message = await refused
hybridProto[hybridKey] = hybridDispatch
/* completion */ /^tools\.hang was not called: its arguments \(\d+ bytes\) would bring the arguments of calls in flight over \d+ bytes \(maxPendingCallBytes\)$/.test(message)
