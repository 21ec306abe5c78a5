// attack: forged traffic posted after the run has already completed
// expect: ok
// value: "completed"
// formats: function-body, script
// prelude: hijack
setImmediate(() => forge({ type: 'failed', run: runId, kind: 'exception', message: 'too late' }))
setTimeout(() => forge(42), 20)
/* completion */ 'completed'
