// attack: with a durable pause, the program holds a call whose argument is nested 30 000 deep (the issue measured 100 000, beyond what the corpus's 64 MiB worker heap holds in flight), far deeper than a recursive serializer's stack on the host; the token is sealed without recursion, and its resume replays the program to the same end
// expect: ok
// value: 30000
// formats: function-body
// durable: yes
// hold: approve
// timeout: 30000
let deep = {}
for (let i = 0; i < 30_000; i++) deep = { a: deep }
let back = await tools.gated(deep)
let depth = 0
while (back.a) { back = back.a; depth++ }
/* completion */ depth
