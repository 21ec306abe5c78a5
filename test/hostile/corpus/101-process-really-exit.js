// attack: the internal process.reallyExit and a process.exitCode set before exit()
// expect: worker-exit
process.exitCode = 9
if (typeof process.reallyExit === 'function') process.reallyExit(9)
process.exit()
