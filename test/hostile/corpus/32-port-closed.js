// attack: the program closes its private channel, so nothing it does can reach the host (in a helper process the worker writes its result to the host itself and only the host's messages take that channel: the run completes, and the environment ends with its channel) (the worker's ports: a process tier's helper runs the program on its main thread, with neither a worker nor its ports)
// hosts: thread, stream
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
