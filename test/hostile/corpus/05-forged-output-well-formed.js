// attack: well-formed forged output is only output the program could have printed anyway
// expect: ok
// prelude: hijack
// value: "after"
// output: ^forged line\n$
forge({ type: 'output', run: runId, items: ['forged line\n'] })
/* completion */ 'after'
