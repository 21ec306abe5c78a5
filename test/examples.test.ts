import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { beforeAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const run = promisify(execFile)
const node = (script: string) => run(process.execPath, [script], { cwd: root, timeout: 60_000 })

describe('examples', () => {
  describe('agent-loop.mjs replays its recorded conversation against the real runtime', () => {
    // One run serves every assertion: the example fails on its own if the replay diverges.
    let stdout = ''
    let stderr = ''
    beforeAll(async () => {
      ;({ stdout, stderr } = await node('examples/agent-loop.mjs'))
    }, 60_000)

    it('exits cleanly without writing to standard error', () => {
      expect(stderr).toBe('')
    })

    it('offers run_code with the runtime instructions and the groups; programs read declarations generated from the schemas through catalog', () => {
      expect(stdout).toContain('0 of 303 tools shown.')
      expect(stdout).toContain('crm.findCustomers - Customers of one country.')
      expect(stdout).toContain('"name": "run_code"')
      expect(stdout).toContain('"description": "The program (repl format)."')
      expect(stdout).toContain('Top-level declarations persist between calls')
      expect(stdout).toContain('  findCustomers(args: {\n    /** ISO 3166-1 alpha-2 code, e.g. "NO" */\n    country: string\n  }): Promise<Array<{')
      expect(stdout).toContain('    currency: "NOK" | "EUR"')
      expect(stdout).toContain('declare class FxError extends Error { tool: string }')
    })

    it('truncates long output, keeping whole lines from both ends', () => {
      expect(stdout).toMatch(/"Emma Haugen".*\n\[… \d+ characters of output omitted …\]\n\{"id":"C119"/)
      expect(stdout).toContain('{"id":"C123","name":"Sofie Haugen","since":"2019-05-12"}\n\n')
    })

    it('hands the model an exception with its program position, and the state survives it', () => {
      expect(stdout).toContain("Error (exception): TypeError: Cannot read properties of undefined (reading 'value')\n    at program:2:108")
      expect(stdout).toMatch(/Result:\n\[\n {2}\{\n {4}"name": "Lars Lie",\n {4}"orders": 2,\n {4}"eur": 2472\n/)
    })

    it('ends with the model answer', () => {
      expect(stdout.trimEnd().split('\n').slice(-2)).toEqual([
        '=== assistant ===',
        'The three Norwegian customers who have spent the most are Lars Lie (EUR 2,472 over 2 orders), Lars Vik (EUR 2,450 over 2 orders) and Nora Haugen (EUR 2,306 over 3 orders). NOK orders were converted at 0.085 EUR per NOK.',
      ])
    })
  })

  it('demo.mjs runs every program and reports each outcome', async () => {
    const { stdout, stderr } = await node('examples/demo.mjs')
    expect(stderr).toBe('')
    expect(stdout).toContain('value: {"ordered":"ORD-1000","total":118}')
    expect(stdout).toContain('> [image chart-1: 120x60 image/png]')
    expect(stdout).toContain('error (exception): Error: cannot order 1 x BAG-07: not enough stock')
    expect(stdout).toContain('error (timeout): the program did not finish within its time budget of 2000 ms (timeoutMs)')
    // The Python program reads the stock the first program's order left.
    expect(stdout).toContain('  > - Gas stove: 10 in stock\n')
    expect(stdout).toContain('  value: 14\n')
  }, 90_000)
})
