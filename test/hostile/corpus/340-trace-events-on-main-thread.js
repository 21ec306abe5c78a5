// attack: enables Node's trace events, which a worker thread refuses (ERR_TRACE_EVENTS_UNAVAILABLE): on a helper's main thread Node's tracing thread keeps writing node_trace logs into the working directory, between runs too, beyond what the host's sweeps look for (the stream host's helper keeps a worker: there the case runs)
// expect: ok
// value: "refused"
// hosts: process,confined,stream
let outcome
try {
  // A worker refuses the module itself as it loads.
  const traceEvents = await import('node:trace_events')
  traceEvents.createTracing({ categories: ['node', 'v8', 'node.async_hooks'] }).enable()
  outcome = 'enabled'
} catch {
  outcome = 'refused'
}
/* completion */ outcome
