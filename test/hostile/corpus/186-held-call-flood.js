// attack: while its call is held for a decision, the program floods output (into an answer nobody is reading yet): the output cap still holds
// expect: output-limit
// hold: approve
// hold-wait: 1000
void tools.gated('flood').catch(() => {})
await tools.delay(50)
while (true) console.log('x'.repeat(1000))
