// attack: the program closes its private channel, so nothing it does can reach the host
// expect: worker-exit
// prelude: hijack
port.close()
/* completion */ 'unreachable'
