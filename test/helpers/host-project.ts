// A host project as a program's attack meets it: the built package installed the way a host
// project installs it (its own copy in `node_modules`), for a real host process run from there.
import { copyFileSync, cpSync, mkdirSync, realpathSync, symlinkSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const REPO = fileURLToPath(new URL('../..', import.meta.url))

/** The real directory of package `name` in the repository's node_modules. */
export const modules = (name: string) => realpathSync(path.join(REPO, 'node_modules', name))

/**
 * This package (package.json and dist/) and the dependencies it loads copied into `dir`'s
 * node_modules, Cordis and what it needs linked. Nothing else: no optional peer is installed.
 */
export function installRuntime(dir: string): void {
  const own = path.join(dir, 'node_modules', 'ptc-runtime')
  mkdirSync(own, { recursive: true })
  copyFileSync(path.join(REPO, 'package.json'), path.join(own, 'package.json'))
  cpSync(path.join(REPO, 'dist'), path.join(own, 'dist'), { recursive: true })
  for (const name of ['acorn', 'schemastery']) cpSync(modules(name), path.join(dir, 'node_modules', name), { recursive: true })
  for (const name of ['cordis', 'cosmokit', '@standard-schema/spec']) {
    mkdirSync(path.dirname(path.join(dir, 'node_modules', name)), { recursive: true })
    symlinkSync(modules(name), path.join(dir, 'node_modules', name))
  }
}
