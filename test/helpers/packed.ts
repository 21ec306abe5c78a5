// A fresh project outside the repository that installed the package as it ships: `npm pack`,
// unpacked into its node_modules as npm would install it. Its dependencies and the optional
// peers come from the repository's own node_modules, unless `modules` names other directories
// (another `ai`, another `typescript`). The project is `"type": "module"`; `remove` deletes it.
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

export const repository = fileURLToPath(new URL('../..', import.meta.url))
export const exec = promisify(execFile)

/** The tarball of the built package, packed into `into`. */
async function packed(into: string): Promise<string> {
  const { stdout } = await exec('npm', ['pack', repository, '--pack-destination', into, '--silent'], { cwd: into })
  return path.join(into, stdout.trim().split('\n').at(-1)!)
}

export interface PackedProject {
  dir: string
  remove(): void
}

/** A project with the packed package; `modules` maps a package name to the directory to use for it. */
export async function packedProject(modules: Record<string, string> = {}): Promise<PackedProject> {
  const dir = mkdtempSync(path.join(tmpdir(), 'ptc-consumer-'))
  const packs = mkdtempSync(path.join(tmpdir(), 'ptc-pack-'))
  const nodeModules = path.join(dir, 'node_modules')
  mkdirSync(path.join(nodeModules, 'ptc-runtime'), { recursive: true })
  await exec('tar', ['xzf', await packed(packs), '-C', path.join(nodeModules, 'ptc-runtime'), '--strip-components=1'])
  for (const name of readdirSync(path.join(repository, 'node_modules'))) {
    if (name === 'ptc-runtime' || name === '.bin' || name === '.package-lock.json' || name in modules) continue
    if (name.startsWith('@') && Object.keys(modules).some((module) => module.startsWith(`${name}/`))) {
      mkdirSync(path.join(nodeModules, name))
      for (const inner of readdirSync(path.join(repository, 'node_modules', name))) {
        if (!(`${name}/${inner}` in modules)) symlinkSync(path.join(repository, 'node_modules', name, inner), path.join(nodeModules, name, inner))
      }
      continue
    }
    symlinkSync(path.join(repository, 'node_modules', name), path.join(nodeModules, name))
  }
  for (const [name, target] of Object.entries(modules)) {
    mkdirSync(path.dirname(path.join(nodeModules, name)), { recursive: true })
    symlinkSync(target, path.join(nodeModules, name))
  }
  writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }\n')
  return {
    dir,
    remove: () => {
      rmSync(dir, { recursive: true, force: true })
      rmSync(packs, { recursive: true, force: true })
    },
  }
}
