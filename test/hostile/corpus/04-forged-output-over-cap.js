// attack: one forged 1 MiB output item that skips the worker-side ledger entirely; the host's reader must refuse it at the first byte past maxOutputBytes, before it builds the string, naming the bound (it built any string the line's length allowed, 145 MiB under the default budgets)
// expect: protocol
// message: an entry of output is a string of more than 65536 bytes
// prelude: hijack
forge({ type: 'output', run: runId, items: ['x'.repeat(1 << 20)] })
await hang()
