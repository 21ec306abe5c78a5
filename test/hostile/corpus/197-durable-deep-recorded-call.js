// attack: with a durable pause, a call answered before the held one had an argument nested 2 000 deep; the replay compares it with the recorded one without recursion (a recursive comparison overflows the host's stack), answers it from the record, and the run ends as it would have
// expect: ok
// value: 2000
// formats: function-body,script
// durable: yes
// hold: approve
let deep = {}
for (let i = 0; i < 2000; i++) deep = { a: deep }
let back = await tools.echo(deep)
await tools.gated(null)
let depth = 0
while (back.a) { back = back.a; depth++ }
/* completion */ depth
