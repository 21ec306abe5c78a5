// attack: well-formed output frames padded with a field the protocol has none of, each holding 600 000 empty lists, one after another: the host built every padding to read the message beside it
// expect: protocol
// prelude: hijack
// bystander: 4000
// timeout: 20000
const padding = `[${'[],'.repeat(600_000)}[]]`
await tools.beside('__MARKER__')
for (let i = 0; i < 10; i++) forgeText(`{"type":"output","run":${runId},"items":[],"padding":${padding}}`)
await hang()
