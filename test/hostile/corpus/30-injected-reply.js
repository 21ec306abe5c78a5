// attack: a forged reply delivered to the worker side settles the program's own pending call
// expect: ok
// value: "self-deceived"
// prelude: hijack
const pending = tools.delay(200)
inject({ type: 'reply', run: runId, id: 2, ok: true, value: ['self-deceived'] })
/* completion */ await pending
