// attack: installs handlers for every catchable signal on the process it now owns (a process tier's program runs on its helper's main thread, where signals reach JavaScript), then spins: the host must still end it at its deadline
// expect: timeout
// hosts: process,confined,stream
// timeout: 1500
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT', 'SIGUSR2', 'SIGPIPE', 'SIGALRM', 'SIGCONT', 'SIGTSTP', 'SIGXCPU']) {
  try { process.on(signal, () => {}) } catch { /* refused */ }
}
for (;;);
