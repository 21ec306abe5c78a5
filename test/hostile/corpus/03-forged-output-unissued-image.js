// attack: forged image entry naming an attachment the host never issued
// expect: protocol
// prelude: hijack
forge({ type: 'output', run: runId, items: [{ attachmentId: 'forged-attachment' }] })
await hang()
