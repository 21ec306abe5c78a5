// attack: looks for the host's network (to reach the internet, the cloud metadata service, or another conversation's helper on loopback)
// expect: ok
// known-limit[thread]: a worker thread shares the host's network
// known-limit[process]: with sandbox: 'none' the deployer gives programs the host's network
// value: ["lo"]
/* In a network namespace of its own the program has only a loopback device, and no other
   process listens on it. */
const os = await import('node:os')
/* completion */ Object.keys(os.networkInterfaces()).sort()
