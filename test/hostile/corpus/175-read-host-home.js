// attack: lists and reads the host user's home directory (~/.ssh keys, cloud credentials, shell history)
// expect: ok
// known-limit[thread]: a worker thread reads whatever the host user can
// known-limit[process]: with sandbox: 'none' the deployer gives programs the host user's files
// value: {"entries":[],"ssh":"ENOENT"}
/* The helper's environment is empty, so the home comes from the password database. Under the
   default confinement the home is an empty private directory. */
const fs = await import('node:fs')
const os = await import('node:os')
const home = os.userInfo().homedir
let ssh
try {
  ssh = fs.readdirSync(`${home}/.ssh`).join(',')
} catch (error) {
  ssh = error.code
}
/* completion */ ({ entries: fs.readdirSync(home), ssh })
