// attack: adds its own 'exit' listener that spins for ever, then exits: the runtime's exit report goes out first, and the process never ends by itself, so the host must end it (the stream host's worker reports nothing until it has exited: its run meets its deadline)
// expect: worker-exit
// expect[stream]: timeout
// hosts: process,confined,stream
process.on('exit', () => { for (;;); })
process.exit(1)
