// The CommonJS face of the package: for each public entry, a `.cjs` file that `require`s the ES
// module and a `.d.cts` that re-exports the ES module's declarations. Node 20.19+ and 22.12+ load
// an ES module through `require()`, so the runtime stays one ES module graph (one `PtcImage`
// class, one set of live workers) whichever way a project loads it; a second, CommonJS build
// would give a project that loads both two copies of both. The declarations are needed because
// TypeScript's `module: node16` refuses a CommonJS file's import of an ES module's declarations
// (TS1479); a type-only import with `resolution-mode: import` is the one form it accepts there,
// so each value is re-declared as `typeof` its ES module self and each class also as a type.
// The names come from the built entry itself, so the two faces cannot drift apart.
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Options } from 'tsup'

type TsupPlugin = NonNullable<Options['plugins']>[number]

const isClass = (value: unknown) => typeof value === 'function' && Function.prototype.toString.call(value).startsWith('class')

/** The `.d.cts` of an entry whose ES module is `./<name>.js` and exports `values` at run time. */
export function commonjsDeclarations(name: string, values: Record<string, unknown>): string {
  const from = `'./${name}.js' with { 'resolution-mode': 'import' }`
  const lines = [
    `// The declarations of ./${name}.js, for CommonJS consumers: see ./${name}.cjs.`,
    `export type * from ${from}`,
    `import type * as esm from ${from}`,
  ]
  for (const [key, value] of Object.entries(values)) {
    lines.push(`export declare const ${key}: typeof esm.${key}`)
    if (isClass(value)) lines.push(`export type ${key} = esm.${key}`)
  }
  return `${lines.join('\n')}\n`
}

/** A tsup plugin writing `<name>.cjs` and `<name>.d.cts` beside each built ES module entry `names`. */
export function commonjsEntries(names: string[]): TsupPlugin {
  return {
    name: 'commonjs-entries',
    async buildEnd() {
      const outDir = this.options.outDir
      for (const name of names) {
        const file = path.resolve(outDir, `${name}.js`)
        // The query gives a rebuild in watch mode a fresh module instead of the cached one.
        const values = (await import(`${pathToFileURL(file).href}?build=${Date.now()}`)) as Record<string, unknown>
        const script = `'use strict'\n// ./${name}.js is the package; require() of an ES module returns its namespace, the one instance an import gets too.\nmodule.exports = require('./${name}.js')\n`
        await writeFile(path.join(outDir, `${name}.cjs`), script)
        await writeFile(path.join(outDir, `${name}.d.cts`), commonjsDeclarations(name, values))
      }
    },
  }
}
