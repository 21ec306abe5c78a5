// attack: forged primitive message on the channel
// expect: protocol
// prelude: hijack
forge(42)
await hang()
