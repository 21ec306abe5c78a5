// attack: the program closes its private channel, so nothing it does can reach the host (in a helper process the worker writes its result to the host itself and only the host's messages take that channel: the run completes, and the environment ends with its channel)
// expect: worker-exit
// expect[process]: ok
// expect[confined]: ok
// value: "unreachable"
// follow-up[process]: fresh
// follow-up[confined]: fresh
// pause: 300
// prelude: hijack
port.close()
/* completion */ 'unreachable'
