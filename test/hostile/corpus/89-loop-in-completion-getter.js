// attack: the completion has a getter that never returns, so validation itself spins
// expect: timeout
// timeout: 500
/* completion */ ({ get forever() { for (;;) {} } })
