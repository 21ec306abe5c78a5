import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process'
import { readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { bwrap } from '../helpers/sandbox.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const fixtures = fileURLToPath(new URL('./fixtures', import.meta.url))
const cli = path.join(root, 'dist', 'cli.js')

/** What every result of ptc-run's default confinement reports. */
const CONFINED = { mode: 'workspace-write', network: 'none', denied: false, enforcement: 'full' }

interface Exit {
  code: number | null
  stdout: string
  stderr: string
}

/** Starts the built `ptc-run` in the fixtures folder; `exit` collects everything it wrote. */
function start(args: string[]): { child: ChildProcessWithoutNullStreams; exit: Promise<Exit>; stderrSoFar: () => string } {
  const child = spawn(process.execPath, [cli, ...args], { cwd: fixtures, stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exit = new Promise<Exit>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
  return { child, exit, stderrSoFar: () => stderr }
}

/** Runs the built `ptc-run` in the fixtures folder, feeding `input` to its standard input. */
function ptcRun(args: string[], input = ''): Promise<Exit> {
  const { child, exit } = start(args)
  child.stdin.end(input)
  return exit
}

/** Resolves once the program has called `signals.ready()` (the fixture writes "ready"). */
async function ready(stderrSoFar: () => string): Promise<void> {
  while (!stderrSoFar().includes('ready\n')) await new Promise((resolve) => setTimeout(resolve, 20))
}

const hasScript = spawnSync('script', ['--version']).status === 0

/**
 * Starts the built `ptc-run` at a pseudo-terminal made by `script`; the terminal echoes the
 * input. `screen()` is what the terminal showed, without carriage returns and cursor moves.
 */
function atTerminal(args: string[]) {
  const command = [process.execPath, cli, ...args].map((word) => `"${word}"`).join(' ')
  const session = spawn('script', ['-qec', command, '/dev/null'], { cwd: fixtures, stdio: ['pipe', 'pipe', 'pipe'] })
  let raw = ''
  session.stdout.setEncoding('utf8').on('data', (chunk: string) => (raw += chunk))
  const exit = new Promise<number | null>((resolve) => session.on('close', resolve))
  const screen = () => raw.replace(/\r/g, '').replace(/\x1b\[\d*[A-Za-z]/g, '')
  return {
    exit,
    screen,
    type: (text: string) => session.stdin.write(text),
    end: () => session.stdin.end(),
    /** Resolves once the screen matches `pattern`. */
    async shows(pattern: RegExp): Promise<void> {
      while (!pattern.test(screen())) await new Promise((resolve) => setTimeout(resolve, 20))
    },
  }
}

describe('ptc-run', () => {
  it('is a package bin, an executable script with a node shebang', () => {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
    expect(pkg.bin).toEqual({ 'ptc-run': './dist/cli.js', 'ptc-runtime-image': './dist/image.js' })
    expect(readFileSync(cli, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true)
    expect(statSync(cli).mode & 0o111).not.toBe(0)
  })

  it('prints the output, then the value as JSON, and exits 0', async () => {
    const result = await ptcRun(['forecast.js', '--tools', './tools.mjs'])
    expect(result).toEqual({ code: 0, stdout: 'Oslo: 14 C\nLima: 22 C\n[\n  "Lima"\n]\n', stderr: '' })
  })

  it('prints nothing after the output when the program returns nothing', async () => {
    const result = await ptcRun(['image.js', '--tools', './tools.mjs'])
    expect(result).toEqual({ code: 0, stdout: '4 2 image/png\n[image bars (chart-1): 4x2 image/png, 68 bytes]\n', stderr: '' })
  })

  it('ends output that lacks a final newline before printing the value', async () => {
    expect(await ptcRun(['no-newline.js'])).toEqual({ code: 0, stdout: 'partial\n1\n', stderr: '' })
  })

  it('prints a value too deep to indent as compact JSON, and says so', async () => {
    // 30 copies of 3 000 nested arrays: over 2^29 characters indented, longer than any string.
    const result = await ptcRun(['-'], 'let deep = []\nfor (let i = 0; i < 3000; i++) deep = [deep]\nreturn Array.from({ length: 30 }, () => deep)')
    let deep: unknown = []
    for (let i = 0; i < 3000; i++) deep = [deep]
    expect(result.code).toBe(0)
    expect(result.stdout).toBe(`${JSON.stringify(Array.from({ length: 30 }, () => deep))}\n`)
    expect(result.stderr).toBe('the value is printed without indentation: indented, it would pass 67108864 characters\n')
  })

  it('prints a value nested deeper than the stack as exact compact JSON', async () => {
    // 200 000 levels: JSON.stringify overflows the stack at a few thousand.
    const result = await ptcRun(['-'], 'let deep = []\nfor (let i = 0; i < 200000; i++) deep = [deep]\nreturn deep')
    expect(result).toEqual({
      code: 0,
      stdout: `${'['.repeat(200_001)}${']'.repeat(200_001)}\n`,
      stderr: 'the value is printed without indentation: indented, it would pass 67108864 characters\n',
    })
  })

  it('prints a program failure on standard error and exits 1', async () => {
    const result = await ptcRun(['fails.js'])
    expect(result).toEqual({
      code: 1,
      stdout: 'before\n',
      stderr: "error (exception): TypeError: Cannot read properties of undefined (reading 'length')\n    at program:3:35\n    at program:3:13\n",
    })
  })

  it('--json prints the exact PtcRunResult', async () => {
    const result = await ptcRun(['forecast.js', '--tools', './tools.mjs', '--json'])
    expect(result.code).toBe(0)
    expect(result.stderr).toBe('')
    expect(JSON.parse(result.stdout)).toEqual({
      output: [
        { type: 'text', text: 'Oslo: 14 C\n' },
        { type: 'text', text: 'Lima: 22 C\n' },
      ],
      value: ['Lima'],
      calls: [expect.objectContaining({ tool: 'weather.forecast', outcome: 'ok' }), expect.objectContaining({ tool: 'weather.forecast', outcome: 'ok' })],
      sandbox: CONFINED,
    })
  })

  it('--json prints a value nested deeper than the stack as exact JSON', async () => {
    const result = await ptcRun(['-', '--json'], 'let deep = []\nfor (let i = 0; i < 6000; i++) deep = [deep]\nreturn deep')
    expect(result.code).toBe(0)
    expect(result.stderr).toBe('')
    expect(result.stdout).toContain(`"value":${'['.repeat(6001)}${']'.repeat(6001)},`)
    expect(JSON.parse(result.stdout)).toMatchObject({ output: [], calls: [], sandbox: CONFINED })
  })

  it('--json still exits 1 for a failed program', async () => {
    const result = await ptcRun(['fails.js', '--json'])
    expect(result.code).toBe(1)
    expect(JSON.parse(result.stdout)).toMatchObject({ output: [{ type: 'text', text: 'before\n' }], error: { kind: 'exception' } })
  })

  it('--tools turns the long export form into a namespace with a typed error class', async () => {
    const result = await ptcRun(['typed-error.js', '--tools', './tools.mjs', '--json'])
    expect(JSON.parse(result.stdout)).toEqual({ output: [], value: { typed: true, tool: 'count', message: 'unknown sku B-2' }, calls: [expect.objectContaining({ tool: 'inventory.count', outcome: 'error' })], sandbox: CONFINED })
  })

  it('--timeout sets the time budget of the run', async () => {
    const result = await ptcRun(['loop.js', '--timeout', '300'])
    expect(result.code).toBe(1)
    expect(result.stderr).toBe('error (timeout): the program did not finish within its time budget of 300 ms (timeoutMs)\n')
  })

  it.skipIf(!bwrap)('by default programs do not see the directory ptc-run runs in; --read shows it, --unconfined gives everything', async () => {
    const program = `const fs = await import('node:fs'); return [fs.existsSync(${JSON.stringify(path.join(fixtures, 'tools.mjs'))}), process.cwd() === ${JSON.stringify(fixtures)}]`
    const value = (result: Exit) => (result.code === 0 ? JSON.parse(result.stdout) : result)
    expect(value(await ptcRun(['-'], program))).toEqual([false, false])
    expect(value(await ptcRun(['-', '--read', '.'], program))).toEqual([true, false])
    expect(value(await ptcRun(['-', '--unconfined'], program))).toEqual([true, true])
  })

  it('refuses a --workspace that does not exist, and --unconfined with a grant', async () => {
    expect((await ptcRun(['-', '--workspace', 'no-such-directory'], 'return 1')).stderr).toMatch(/^ptc-run: .*workspaceRoot must be an existing directory/)
    expect((await ptcRun(['-', '--unconfined', '--network', 'host'], 'return 1')).stderr).toMatch(/^ptc-run: --unconfined already grants everything/)
  })

  it('--format script takes the value of the last expression', async () => {
    expect(await ptcRun(['script.js', '--format', 'script'])).toEqual({ code: 0, stdout: '12\n', stderr: '' })
  })

  it('reads the program from standard input when the file is "-"', async () => {
    expect(await ptcRun(['-', '--tools', './tools.mjs'], 'return (await weather.cities()).length')).toEqual({ code: 0, stdout: '2\n', stderr: '' })
  })

  it('exits once the run ends even when the tools module holds the event loop open', async () => {
    expect(await ptcRun(['clock.js', '--tools', './holds-open.mjs'])).toEqual({ code: 0, stdout: '1700000000000\n', stderr: '' })
  })

  it('Ctrl-C (SIGINT) stops the program, which fails with abort', async () => {
    const { child, exit, stderrSoFar } = start(['-', '--tools', './tools.mjs'])
    child.stdin.end('await signals.ready()\nwhile (true) {}')
    await ready(stderrSoFar)
    child.kill('SIGINT')
    expect(await exit).toEqual({ code: 1, stdout: '', stderr: 'ready\nerror (abort): interrupted (Ctrl-C)\n' })
  })

  it('--help prints the usage and exits 0', async () => {
    const result = await ptcRun(['--help'])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^Usage:\n {2}ptc-run <program\.js \| program\.ts \| -> /)
    expect(result.stdout).toMatch(/Exit codes: 0 the program succeeded, 1 the program failed, 2 usage error\./)
  })

  describe('usage errors exit 2 and say what is wrong', () => {
    it.each([
      ['an unknown flag', ['forecast.js', '--verbose'], "ptc-run: Unknown option '--verbose'"],
      ['a missing program', [], 'ptc-run: missing program file (or --repl)'],
      ['a missing program file', ['nowhere.js'], 'ptc-run: program file not found: nowhere.js'],
      ['two program files', ['forecast.js', 'loop.js'], 'ptc-run: expected one program file, got 2: forecast.js loop.js'],
      ['a zero --timeout', ['loop.js', '--timeout', '0'], 'ptc-run: --timeout must be a whole number of milliseconds from 1 to 2147483647, got "0"'],
      ['a non-numeric --timeout', ['loop.js', '--timeout', '5s'], 'ptc-run: --timeout must be a whole number of milliseconds from 1 to 2147483647, got "5s"'],
      ['a --timeout without a value', ['loop.js', '--timeout'], "ptc-run: Option '--timeout <value>' argument missing"],
      ['an unknown --format', ['loop.js', '--format', 'module'], 'ptc-run: --format must be one of function-body, script, repl, scoped-repl, got "module"'],
      ['a missing --tools module', ['forecast.js', '--tools', './nope.mjs'], 'ptc-run: --tools module not found: ./nope.mjs'],
      ['a --tools module that throws', ['forecast.js', '--tools', './throws.mjs'], 'ptc-run: --tools module ./throws.mjs failed to load: tools module exploded'],
      [
        'an export that is not an object of functions',
        ['forecast.js', '--tools', './not-functions.mjs'],
        'ptc-run: --tools export "settings" must be an object of functions, or { functions, errorClass }; member "retries" is a number',
      ],
      ['an export with a reserved name', ['forecast.js', '--tools', './reserved.mjs'], 'ptc-run: --tools module ./reserved.mjs: binding global "console"'],
      ['--json with --repl', ['--repl', '--json'], 'ptc-run: --json cannot be combined with --repl'],
      ['a program file with --repl', ['--repl', 'forecast.js'], 'ptc-run: --repl reads programs from the terminal; unexpected argument "forecast.js"'],
    ])('%s', async (_name, args, message) => {
      const result = await ptcRun(args)
      expect(result.code).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr.startsWith(message)).toBe(true)
      expect(result.stderr).toMatch(/\n\nUsage:\n/)
    })
  })

  describe('--repl', () => {
    it('keeps one environment across programs read from standard input', async () => {
      const input = ['let n = 20', 'n += 1', 'const city = (await weather.cities())[0]', 'city + " " + n * 2', ''].join('\n')
      expect(await ptcRun(['--repl', '--tools', './tools.mjs'], input)).toEqual({ code: 0, stdout: '21\n"Oslo 42"\n', stderr: '' })
    })

    it('reads a program over several lines until it parses', async () => {
      const input = ['function area(w, h) {', '', '  return w * h', '}', 'const label = `area', 'is`', '[area(3, 4),', ' label]', ''].join('\n')
      expect(await ptcRun(['--repl'], input)).toEqual({ code: 0, stdout: '[\n  12,\n  "area\\nis"\n]\n', stderr: '' })
    })

    it('reports a failure and keeps going with the state it had', async () => {
      const input = ['let kept = 1', 'kept.toFixed(1).missing.x', 'kept + 1', ''].join('\n')
      const result = await ptcRun(['--repl'], input)
      expect(result.code).toBe(0)
      expect(result.stdout).toBe('2\n')
      expect(result.stderr).toBe("error (exception): TypeError: Cannot read properties of undefined (reading 'x')\n    at program:1:24\n")
    })

    it('runs an unfinished program at end of input so its syntax error is reported', async () => {
      const result = await ptcRun(['--repl'], 'const x = [1, 2\n')
      expect(result.code).toBe(0)
      expect(result.stderr).toMatch(/^error \(exception\): SyntaxError: Unexpected end of input \(line 1, column 16\)/)
    })

    it('reads a using declaration over several lines; it needs Node 24, and is disposed when its program ends', async () => {
      const input = ['using handle = {', '  [Symbol.dispose]() { console.log("disposed") },', '}', 'typeof handle', ''].join('\n')
      const result = await ptcRun(['--repl'], input)
      expect(result.code).toBe(0)
      if (Number(process.versions.node.split('.')[0]) >= 24) {
        expect(result).toEqual({ code: 0, stdout: 'disposed\n"undefined"\n', stderr: '' })
      } else {
        expect(result.stdout).toBe('"undefined"\n')
        expect(result.stderr).toMatch(/^error \(exception\): SyntaxError: 'using' declarations need Node\.js 24 or later \(this runtime runs on Node\.js [\d.]+\) \(line 1, column 1\)\n/)
      }
    })

    it('stops at .exit', async () => {
      expect(await ptcRun(['--repl'], '1 + 1\n.exit\n2 + 2\n')).toEqual({ code: 0, stdout: '2\n', stderr: '' })
    })

    it('--format scoped-repl lets a later program redeclare a const', async () => {
      const input = ['const x = 1', 'const read = () => x', 'const x = 2', '[x, read()]', ''].join('\n')
      expect(await ptcRun(['--repl', '--format', 'scoped-repl'], input)).toEqual({ code: 0, stdout: '[\n  2,\n  1\n]\n', stderr: '' })
    })

    it('Ctrl-C (SIGINT) stops the program in progress and the session goes on', async () => {
      const { child, exit, stderrSoFar } = start(['--repl', '--tools', './tools.mjs'])
      child.stdin.write('let kept = 1\nawait signals.ready(); while (true) {}\n')
      await ready(stderrSoFar)
      child.kill('SIGINT')
      child.stdin.end('typeof kept\n')
      const result = await exit
      expect(result.code).toBe(0)
      expect(result.stderr).toBe('ready\nerror (abort): interrupted (Ctrl-C)\n')
      expect(result.stdout).toBe('[earlier state was lost because it was aborted; this run starts in a fresh environment]\n"undefined"\n')
    })

    it.skipIf(!hasScript)('at a terminal, greets, prompts, and prompts again while a program is unfinished', async () => {
      const terminal = atTerminal(['--repl', '--tools', './tools.mjs'])
      // Type each line only once its prompt is shown, as a person would.
      await terminal.shows(/Programs may span lines; \.exit or Ctrl-D leaves\.\n> $/)
      terminal.type('1 + 1\n')
      await terminal.shows(/\n2\n> $/)
      terminal.type('const list = [\n')
      await terminal.shows(/\n\.\.\. $/)
      terminal.type('  3]\n')
      await terminal.shows(/\n> $/)
      terminal.type('list.length\n')
      await terminal.shows(/\n1\n> $/)
      terminal.type('.exit\n')
      expect(await terminal.exit).toBe(0)
      expect(terminal.screen()).toContain('ptc-run REPL (repl, tools: charts, inventory, signals, weather). Programs may span lines; .exit or Ctrl-D leaves.\n')
    })

    it.skipIf(!hasScript)('at a terminal, input that ends while a program runs lets it and the lines typed ahead finish', async () => {
      const terminal = atTerminal(['--repl', '--tools', './tools.mjs'])
      await terminal.shows(/\n> $/)
      terminal.type("await signals.ready(); await new Promise((resolve) => setTimeout(resolve, 1000)); 'first'\n'second'\n")
      await terminal.shows(/\nready\n/)
      // Ending the input makes `script` send end-of-file to the terminal while the program runs.
      terminal.end()
      expect(await terminal.exit).toBe(0)
      expect(terminal.screen()).toMatch(/\nready\n"first"\n"second"\n$/)
      expect(terminal.screen()).not.toContain('internal error')
    })

    it.skipIf(!hasScript)('at a terminal, a held call is asked about: approved, refused, or answered with the typed text', async () => {
      const terminal = atTerminal(['--repl', '--tools', './approvals.mjs'])
      await terminal.shows(/\n> $/)
      terminal.type("await mail.send({ to: 'ana' })\n")
      await terminal.shows(/mail\.send\(\{"to":"ana"\}\) awaits approval\. Approve\? \[y\/N\] $/)
      terminal.type('y\n')
      await terminal.shows(/\n"sent"\n> $/)
      terminal.type('await mail.send({}).catch((error) => error.message)\n')
      await terminal.shows(/Approve\? \[y\/N\] $/)
      terminal.type('n\n')
      await terminal.shows(/\n"refused at the terminal"\n> $/)
      terminal.type('await mail.ask()\n')
      await terminal.shows(/mail\.ask\(\) asks \{"question":"Which folder\?"\}\nAnswer \(empty refuses\): $/)
      terminal.type('Inbox\n')
      await terminal.shows(/\n"Inbox"\n> $/)
      terminal.type('.exit\n')
      expect(await terminal.exit).toBe(0)
    })

    it.skipIf(!hasScript)('at a terminal, a held call asks whatever its request nests, cut', async () => {
      const terminal = atTerminal(['--repl', '--tools', './approvals.mjs'])
      await terminal.shows(/\n> $/)
      terminal.type('let deep = 0; for (let i = 0; i < 200000; i++) deep = [deep]; await mail.echo(deep).catch((error) => error.message)\n')
      await terminal.shows(/\nmail\.echo\(\[{490}… asks \[{10000}…\nAnswer \(empty refuses\): $/)
      terminal.type('\n')
      await terminal.shows(/\n"refused at the terminal"\n> $/)
      terminal.type('.exit\n')
      expect(await terminal.exit).toBe(0)
    })

    it('without a terminal, a held call is refused at once and the refusal is named on stderr', async () => {
      const result = await ptcRun(['-', '--tools', './approvals.mjs'], "return await mail.send({ to: 'ana' }).catch((error) => error.message)")
      expect(result).toEqual({
        code: 0,
        stdout: '"nobody could approve this call (ptc-run without a terminal)"\n',
        stderr: 'ptc-run: refused mail.send({"to":"ana"}): it needs a decision and nobody can answer here (use --repl at a terminal)\n',
      })
    })

    it('names a held call whatever its argument nests, refuses it, and the session goes on', async () => {
      const deep = 'const deep = (() => { let value = 0; for (let i = 0; i < 200000; i++) value = [value]; return value })()'
      const input = [deep, 'await mail.send({ deep }).catch((error) => error.message)', 'deep', '1 + 1', ''].join('\n')
      const result = await ptcRun(['--repl', '--tools', './approvals.mjs'], input)
      expect(result).toEqual({
        code: 0,
        stdout: `"nobody could approve this call (ptc-run without a terminal)"\n${'['.repeat(200_000)}0${']'.repeat(200_000)}\n2\n`,
        stderr:
          `ptc-run: refused ${'mail.send({"deep":'.padEnd(500, '[')}…: it needs a decision and nobody can answer here (use --repl at a terminal)\n` +
          'the value is printed without indentation: indented, it would pass 67108864 characters\n',
      })
    })

    it('--timeout applies to each program, and a timeout says state was lost', async () => {
      const input = ['let kept = 1', 'while (true) {}', 'typeof kept', ''].join('\n')
      // Generous: the fresh environment after the loss starts within the next run's budget.
      const result = await ptcRun(['--repl', '--timeout', '3000'], input)
      expect(result.code).toBe(0)
      expect(result.stderr).toBe('error (timeout): the program did not finish within its time budget of 3000 ms (timeoutMs)\n')
      expect(result.stdout).toMatch(/^\[earlier state was lost because .*\]\n"undefined"\n$/)
    })
  })
})
