// attack: on the durable replay of its run, the program tampers with what the replay answers: it replaces Date.now and Math.random before its recorded calls, and, telling the replay from the first run by an unrecorded clock, calls its tools out of order; the host refuses the divergent call and the run fails cleanly, no tool running again
// expect: exception
// message: diverged from its recorded run at binding call #1: the recorded run called tools\.echo\("first"\), the replay called tools\.echo\("out of order"\)
// formats: function-body,script
// durable: yes
// hold: approve
// hold-wait: 1000
const recorded = Date.now()
const replaying = performance.timeOrigin + performance.now() - recorded > 500
Date.now = () => 0
Math.random = () => 0
if (replaying) await tools.echo('out of order')
await tools.echo('first')
/* completion */ await tools.gated([Date.now(), Math.random()])
