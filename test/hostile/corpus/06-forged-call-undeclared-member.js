// attack: forged binding call to a member the host never declared
// expect: protocol
// prelude: hijack
forge({ type: 'call', run: runId, id: 2, global: 'tools', name: 'shell', args: ['rm -rf /'] })
await hang()
