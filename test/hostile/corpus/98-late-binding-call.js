// attack: a binding captured by this run is called from a timer after the run has settled
// expect: ok
// value: "returned"
const echo = tools.echo
setTimeout(() => echo('late').catch(() => {}), 20)
/* completion */ 'returned'
