/**
 * The code of a docs page's named block (`// name.ts` on its first line), imported as written:
 * the providers the docs show are the ones the tier tests run. The block is written to a
 * scratch directory inside the checkout (ignored by git), where `ptc-runtime` resolves to the
 * built package as it does for a user, and removed with `removeDocsCode`.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const SCRATCH = path.join(ROOT, '.scratch', `docs-code-${process.pid}`)

/** The block of `page` (relative to the checkout) whose first line is `// ${file}`. */
export function docsBlock(page: string, file: string): string {
  const text = readFileSync(path.join(ROOT, page), 'utf8')
  const blocks = [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]!)
  const found = blocks.filter((block) => block.startsWith(`// ${file}\n`))
  if (found.length !== 1) throw new Error(`${page} has ${found.length} blocks named ${file}`)
  return found[0]!
}

/** Imports the named block of `page` as a module. */
export async function importDocsCode<T>(page: string, file: string): Promise<T> {
  mkdirSync(SCRATCH, { recursive: true })
  const target = path.join(SCRATCH, file)
  writeFileSync(target, docsBlock(page, file))
  return (await import(target)) as T
}

export function removeDocsCode(): void {
  rmSync(SCRATCH, { recursive: true, force: true })
}
