// attack: a timer left behind writes large frames to the helper's channel between runs, for no run to read (the host parses nothing that large while no run listens, and discards the environment)
// expect: ok
// value: "flooding"
// hosts: process, confined
// formats: repl, scoped-repl
// follow-up: fresh
// pause: 300
// prelude: hijack
const flood = Buffer.from(`${JSON.stringify({ type: 'message', message: { type: 'output', run: runId, items: ['x'.repeat(1 << 20)] } })}\n`)
setTimeout(() => { for (let i = 0; i < 20; i++) writeWhole(flood) }, 50)
/* completion */ 'flooding'
