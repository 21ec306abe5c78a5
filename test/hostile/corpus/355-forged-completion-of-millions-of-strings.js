// attack: a forged completion of one list of 13 212 057 copies of "ab" (63 MiB of JSON, within the default 64 MiB of output): a string is no key, list or object, so it passed every bound of a message, and the host built 13 million strings, 549-614 MB of its heap a run (ten such runs at once took it to 96 % of its heap limit, with an 8 s stall); the reader must refuse the line at its 2 097 153rd value, naming the bound
// expect: protocol
// message: "value" holds more than 2097152 values in all, with the message's other program data
// prelude: hijack
// formats: function-body
// config: {"maxOutputBytes": 67108864, "maxOldGenerationSizeMb": 512, "maxMemoryMb": 1024}
// heap: 176
// timeout: 30000
forgeText(`{"type":"done","run":${runId},"value":[${'"ab",'.repeat(13_212_056)}"ab"]}`)
await hang()
