// attack: the program settles its own held call with a reply forged to its worker side: it deceives only itself (the host still holds the call, the run ends with the forged value while held, and the later refusal answers nothing)
// expect: ok
// value: "self-settled"
// prelude: hijack
// hold: refuse
// hold-wait: 1000
const held = tools.gated('x')
await tools.delay(50)
inject({ type: 'reply', run: runId, id: 2, ok: true, value: ['self-settled'] })
/* completion */ await held
