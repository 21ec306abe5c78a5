// tsup's own `clean` runs twice: before the JavaScript build and again, for `.d.ts`, `.d.cts` and
// `.d.mts` files, when the declaration build starts in its worker, which may be after the
// JavaScript build has finished and written the CommonJS entries' `.d.cts` (see
// scripts/commonjs-entries.ts). This plugin is the one clean instead, before the JavaScript build:
// the declaration build, seconds of type checking later, then only writes.
import { readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import type { Options } from 'tsup'

type TsupPlugin = NonNullable<Options['plugins']>[number]

/** A tsup plugin emptying the output directory, but for the files named in `keep`, as a build starts. */
export function cleanOutput(keep: string[]): TsupPlugin {
  return {
    name: 'clean-output',
    async buildStart() {
      const outDir = path.resolve(this.options.outDir)
      const names = await readdir(outDir).catch(() => [])
      await Promise.all(names.filter((name) => !keep.includes(name)).map((name) => rm(path.join(outDir, name), { recursive: true, force: true })))
    },
  }
}
