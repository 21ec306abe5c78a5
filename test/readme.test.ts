// Every code block in README.md is exercised here, so the README cannot drift from the code:
// - a `js` block runs as an ES module (cwd = the repository root, so `ptc-runtime` resolves to
//   the built package through its self-reference); it must exit 0 without writing to stderr,
//   and when a `text` block follows it directly, that block is exactly what it prints;
// - a `sh` block whose only command is `npx ptc-run …` (or `printf … | npx ptc-run …`) runs the
//   built CLI the same way, and a directly following `text` block is its combined output;
// - every `npm run <script>` in a `sh` block names a script of package.json.
// A `text` block that does not follow a runnable block (a usage synopsis) is prose.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
const scripts = Object.keys(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).scripts)

interface Block {
  lang: string
  code: string
  line: number
  /** The text block right after this one, if only blank lines separate them. */
  expected?: string
}

function fencedBlocks(markdown: string): Block[] {
  const blocks: Block[] = []
  const lines = markdown.split('\n')
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
    if (i === lines.length) throw new Error(`README.md:${start + 1}: unclosed code block`)
    const block: Block = { lang: open[1]!, code: `${body.join('\n')}\n`, line: start + 1 }
    const previous = blocks.at(-1)
    if (block.lang === 'text' && previous && previous.lang !== 'text' && !gapSincePrevious) previous.expected = block.code
    blocks.push(block)
    gapSincePrevious = false
  }
  return blocks
}

function run(command: string, args: string[], input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(input)
  })
}

const blocks = fencedBlocks(readme)
const known = new Set(['js', 'sh', 'text'])
const cliCommand = /^(printf '[^']*' \| )?npx ptc-run( .*)?$/

describe('README.md', () => {
  it('tags every code block js, sh or text', () => {
    expect(blocks.filter((block) => !known.has(block.lang)).map((block) => `${block.line}: ${block.lang || '(none)'}`)).toEqual([])
  })

  it('names only npm scripts that exist', () => {
    const named = blocks
      .filter((block) => block.lang === 'sh')
      .flatMap((block) => [...block.code.matchAll(/npm run ([\w:-]+)/g)].map((match) => match[1]!))
    expect(named.length).toBeGreaterThan(0)
    expect(named.filter((name) => !scripts.includes(name))).toEqual([])
  })

  describe.concurrent('js blocks run and print what the README shows', () => {
    for (const block of blocks.filter((b) => b.lang === 'js')) {
      it(`block at line ${block.line}`, { timeout: 120_000 }, async () => {
        const result = await run(process.execPath, ['--input-type=module'], block.code)
        expect(result.stderr).toBe('')
        expect(result.code).toBe(0)
        if (block.expected !== undefined) expect(result.stdout).toBe(block.expected)
      })
    }
  })

  describe.concurrent('ptc-run examples print what the README shows', () => {
    for (const block of blocks.filter((b) => b.lang === 'sh' && cliCommand.test(b.code.trim()))) {
      it(`block at line ${block.line}`, { timeout: 60_000 }, async () => {
        const command = block.code.trim().replace('npx ptc-run', `"${process.execPath}" dist/cli.js`)
        const result = await run('bash', ['-c', command], '')
        expect(result.stdout + result.stderr).toBe(block.expected)
      })
    }
  })
})
