// attack: an inspector session on the main thread evaluates code there and reads the host's environment secret
// expect: ok
// expect[thread]: exception
// message[thread]: isolation: 'process'
// timeout: 15000
// prelude: main-thread
// value: "no secret"
/* On the process host the main thread is the helper's, whose environment holds none of the
   host's; the runner also checks that the secret appears nowhere in any result. */
const secret = (await evaluateOnMainThread('process.env.PTC_CORPUS_SECRET')).value
/* completion */ secret === undefined ? 'no secret' : secret
