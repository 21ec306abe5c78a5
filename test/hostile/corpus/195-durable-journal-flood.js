// attack: with a durable pause, the program makes call after call with near-megabyte arguments that the tool echoes back, so the host's journal of the run (which a token carries) grows by every argument and reply; the run fails at once naming the journal's budget, and the host keeps no more than it
// expect: exception
// message: durable journal of this run is over its budget of \d+ bytes \(maxJournalBytes, in the runtime's configuration\)
// formats: function-body,script
// durable: yes
// hold: approve
// timeout: 30000
const text = 'x'.repeat(900_000)
for (let i = 0; i < 100; i++) await tools.echo({ i, text })
/* completion */ await tools.gated('never reached')
