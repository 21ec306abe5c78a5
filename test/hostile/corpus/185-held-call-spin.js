// attack: while its call is held for a decision (its deadline stopped), the program spins instead of waiting, to run for as long as nobody answers: a hold stops the clock only for an idle program, so the spin spends the budget and times out
// expect: timeout
// hold: approve
// hold-wait: 8000
void tools.gated('spin').catch(() => {})
await tools.delay(50)
while (true) {}
