// attack: forged calls that skip the worker's own check of the budget of arguments in flight (1 MiB here), passing 512 KiB each to a tool that never answers
// expect: ok
// prelude: hijack
// value: true
/* The worker refuses an over-budget call before copying it out, but a program can post calls
   itself: the host counts again and refuses the one that would pass maxPendingCallBytes. */
const refused = new Promise((resolve) => {
  hybridProto[hybridKey] = function (...args) {
    const message = args[0]
    const replies = message?.type === 'replies' ? message.replies : [message]
    for (const reply of replies) if (this === port && reply?.type === 'reply' && reply.ok === false) resolve(reply.message)
    return hybridDispatch.apply(this, args)
  }
})
const big = 'x'.repeat(2 ** 19)
for (let id = 2; id < 5; id++) forge({ type: 'call', run: runId, id, global: 'tools', name: 'hang', args: [big] })
const message = await refused
hybridProto[hybridKey] = hybridDispatch
/* completion */ /^tools\.hang was not called: its arguments \(\d+ bytes\) would bring the arguments of calls in flight over \d+ bytes \(maxPendingCallBytes\)$/.test(message)
