// attack: one forged 1 MiB output item that skips the worker-side ledger entirely
// expect: output-limit
// prelude: hijack
forge({ type: 'output', run: runId, items: ['x'.repeat(1 << 20)] })
await hang()
