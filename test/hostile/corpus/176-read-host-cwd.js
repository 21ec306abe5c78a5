// attack: reads the host's working directory (its .env, its configuration, its code, its .git)
// expect: ok
// known-limit[thread]: a worker thread reads whatever the host user can
// known-limit[process]: with sandbox: 'none' the deployer gives programs the host user's files
// value: []
/* __HOST_CWD__ is where the host runs: here the repository, with its sources and .git. Only the
   runtime's own build (dist, package.json) and its dependencies are visible there, read-only. */
const fs = await import('node:fs')
const found = ['.env', '.git', 'src', 'test', 'README.md', 'package-lock.json'].filter((entry) => fs.existsSync(`__HOST_CWD__/${entry}`))
/* completion */ found
