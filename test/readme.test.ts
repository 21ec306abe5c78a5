// Every code block of README.md and docs/*.md is exercised here, as a new user would meet it:
// in a fresh project outside the repository (removed at the end) that installed the packed
// package (`npm pack`, so only what ships) and whose tsconfig.json is `tsc --init`'s with
// `"types": ["node"]`, in a package.json of `"type": "module"`:
// - a `ts` block is compiled there with tsc and must give no diagnostic; a block that imports
//   `cordis` is compiled with the Cordis tsconfig docs/cordis.md shows (its `json` block). The
//   emitted JavaScript then runs with cwd = the project; it must exit 0 without writing to
//   stderr, and when a `text` block follows it directly, that block is exactly what it prints;
// - a block whose first line is a comment naming a file (`// tools.mjs`) is that file of the
//   project: written, compiled when it is TypeScript, never run;
// - a `sh` block whose only command is `npx ptc-run …` (or `printf … | npx ptc-run …`) runs the
//   packed CLI in the project, and a directly following `text` block is its combined output;
// - every `npm run <script>` in a `sh` block names a script of package.json.
// A `text` block that does not follow a runnable block (a usage synopsis) is prose.
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { exec, type PackedProject, packedProject } from './helpers/packed.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const scripts = Object.keys(JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).scripts)
const pages = ['README.md', ...readdirSync(path.join(root, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)]

interface Block {
  page: string
  lang: string
  code: string
  line: number
  /** The text block right after this one, if only blank lines separate them. */
  expected?: string
  /** The project file this block is, when its first line names one. */
  file?: string
}

function fencedBlocks(page: string): Block[] {
  const blocks: Block[] = []
  const lines = readFileSync(path.join(root, page), 'utf8').split('\n')
  let gapSincePrevious = false
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!)
    if (!open) {
      if (lines[i]!.trim() !== '') gapSincePrevious = true
      continue
    }
    const start = i
    const body: string[] = []
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]!)
    if (i === lines.length) throw new Error(`${page}:${start + 1}: unclosed code block`)
    const block: Block = { page, lang: open[1]!, code: `${body.join('\n')}\n`, line: start + 1 }
    const named = /^\/\/ ([\w.-]+\.(?:ts|mts|mjs|js))$/.exec(body[0] ?? '')
    if (named && (block.lang === 'ts' || block.lang === 'js')) block.file = named[1]
    const previous = blocks.at(-1)
    if (block.lang === 'text' && previous && previous.lang !== 'text' && !gapSincePrevious) previous.expected = block.code
    blocks.push(block)
    gapSincePrevious = false
  }
  return blocks
}

function run(command: string, args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

const blocks = pages.flatMap(fencedBlocks)
const known = new Set(['ts', 'js', 'sh', 'text', 'json'])
const cliCommand = /^(printf '[^']*' \| )?npx ptc-run( .*)?$/
const tsBlocks = blocks.filter((block) => block.lang === 'ts')
const usesCordis = (block: Block) => /from 'cordis'/.test(block.code)
const sourceName = (block: Block) => block.file ?? `${block.page.replace(/[/.]/g, '-')}-${block.line}.ts`
const emitted = (block: Block) => sourceName(block).replace(/\.ts$/, '.js')
const cordisConfig = blocks.filter((block) => block.page === 'docs/cordis.md' && block.lang === 'json')

let packed: PackedProject | undefined
let project = ''
/** Diagnostics of the project's compilation, by source file name. */
const diagnostics = new Map<string, string[]>()

/** The tsc of the repository, run in the project. */
const tsc = (args: string[]) => exec(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), ...args], { cwd: project }).then(
  ({ stdout }) => stdout,
  (error: { stdout?: string }) => error.stdout ?? String(error),
)

beforeAll(async () => {
  packed = await packedProject()
  project = packed.dir
  await tsc(['--init'])
  const init = readFileSync(path.join(project, 'tsconfig.json'), 'utf8')
  expect(init).toContain('"types": [],')
  writeFileSync(path.join(project, 'tsconfig.json'), init.replace('"types": [],', '"types": ["node"],'))
  for (const block of blocks.filter((b) => b.file || b.lang === 'ts')) writeFileSync(path.join(project, sourceName(block)), block.code)
  // tsc --init's configuration compiles every .ts of the project: list the files per configuration instead.
  const plain = tsBlocks.filter((block) => !usesCordis(block)).map(sourceName)
  const cordis = tsBlocks.filter(usesCordis).map(sourceName)
  writeFileSync(path.join(project, 'tsconfig.plain.json'), JSON.stringify({ extends: './tsconfig.json', files: plain }))
  const outputs = [await tsc(['-p', 'tsconfig.plain.json'])]
  if (cordis.length > 0) {
    expect(cordisConfig).toHaveLength(1)
    const config = JSON.parse(cordisConfig[0]!.code)
    writeFileSync(path.join(project, 'tsconfig.cordis.json'), JSON.stringify({ ...config, files: cordis }))
    outputs.push(await tsc(['-p', 'tsconfig.cordis.json']))
  }
  for (const line of outputs.join('\n').split('\n')) {
    const file = /^([\w.-]+)\(\d+,\d+\): error/.exec(line)?.[1] ?? (line.trim() === '' ? undefined : '(project)')
    if (file !== undefined) diagnostics.set(file, [...(diagnostics.get(file) ?? []), line])
  }
}, 240_000)

afterAll(() => packed?.remove())

describe('README.md and docs/', () => {
  it('tags every code block ts, js, sh, json or text', () => {
    expect(blocks.filter((block) => !known.has(block.lang)).map((block) => `${block.page}:${block.line}: ${block.lang || '(none)'}`)).toEqual([])
  })

  it('writes every JavaScript example as TypeScript, except a project file', () => {
    expect(blocks.filter((block) => block.lang === 'js' && !block.file).map((block) => `${block.page}:${block.line}`)).toEqual([])
  })

  it('names only npm scripts that exist', () => {
    const named = blocks
      .filter((block) => block.lang === 'sh')
      .flatMap((block) => [...block.code.matchAll(/npm run ([\w:-]+)/g)].map((match) => match[1]!))
    expect(named.length).toBeGreaterThan(0)
    expect(named.filter((name) => !scripts.includes(name))).toEqual([])
  })

  it('links only to pages and headings that exist', () => {
    const slug = (heading: string) => heading.trim().toLowerCase().replace(/[^\w\- ]/g, '').replaceAll(' ', '-')
    const anchors = (page: string) => [...readFileSync(path.join(root, page), 'utf8').matchAll(/^#+ (.*)$/gm)].map((match) => slug(match[1]!))
    const broken = pages.flatMap((page) =>
      [...readFileSync(path.join(root, page), 'utf8').matchAll(/\]\(([^)\s]+)\)/g)]
        .map((match) => match[1]!)
        .filter((target) => !/^https?:/.test(target))
        .filter((target) => {
          const [file, anchor] = target.split('#') as [string, string | undefined]
          const linked = file === '' ? page : path.normalize(path.join(path.dirname(page), file))
          if (!existsSync(path.join(root, linked))) return true
          return anchor !== undefined && linked.endsWith('.md') && !anchors(linked).includes(anchor)
        })
        .map((target) => `${page}: ${target}`),
    )
    expect(broken).toEqual([])
  })

  it('compiles as a project under tsc --init, apart from its examples', () => {
    expect(diagnostics.get('(project)') ?? []).toEqual([])
  })

  describe.concurrent('ts blocks compile under tsc --init, run and print what the page shows', () => {
    for (const block of tsBlocks) {
      it(`${block.page}:${block.line}`, { timeout: 120_000 }, async () => {
        expect(diagnostics.get(sourceName(block)) ?? []).toEqual([])
        if (block.file) return
        const result = await run(process.execPath, [emitted(block)], project)
        expect(result.stderr).toBe('')
        expect(result.code).toBe(0)
        if (block.expected !== undefined) expect(result.stdout).toBe(block.expected)
      })
    }
  })

  describe.concurrent('ptc-run examples print what the page shows', () => {
    for (const block of blocks.filter((b) => b.lang === 'sh' && cliCommand.test(b.code.trim()))) {
      it(`${block.page}:${block.line}`, { timeout: 60_000 }, async () => {
        const command = block.code.trim().replace('npx ptc-run', `"${process.execPath}" node_modules/ptc-runtime/dist/cli.js`)
        const result = await run('bash', ['-c', command], project)
        expect(result.stdout + result.stderr).toBe(block.expected)
      })
    }
  })
})
