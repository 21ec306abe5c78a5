/**
 * The ready tool on a Python runtime describes its tools as Python (signatures, TypedDicts and
 * docstrings from the JSON Schemas), says what the interpreter has, and a program written
 * against those declarations runs. Thread tier: the text is the subject, not the confinement.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PtcBindingNamespace, type ToolGroup, createRunCodeTool, defineToolGroup } from 'ptc-runtime'
import { startRuntime } from '../helpers/runtime.js'

const SLOW = { timeout: 180_000 }

const weather = defineToolGroup({
  global: 'weather',
  description: 'Forecasts from the met office.',
  errorClass: { name: 'WeatherError', memberNameProperty: 'tool' },
  tools: {
    forecast: {
      description: 'The forecast for a city, one entry per day.',
      inputSchema: {
        type: 'object',
        properties: {
          city: { type: 'string', description: 'City name' },
          days: { type: 'integer', minimum: 1, maximum: 14, default: 3 },
          units: { enum: ['metric', 'imperial'] },
        },
        required: ['city'],
      },
      outputSchema: {
        type: 'object',
        properties: {
          city: { type: 'string' },
          days: {
            type: 'array',
            items: { type: 'object', properties: { date: { type: 'string', format: 'date' }, highC: { type: 'number', description: 'Highest temperature, °C' } }, required: ['date', 'highC'] },
          },
        },
        required: ['city', 'days'],
      },
      run: ({ city, days = 3 }: { city: string; days?: number }) => ({
        city,
        days: Array.from({ length: days }, (_, index) => ({ date: `2026-12-0${index + 1}`, highC: city.length + index })),
      }),
    },
    alerts: {
      description: 'Active alerts.',
      inputSchema: { type: 'object', properties: { region: { type: ['string', 'null'] }, tags: { type: 'object', additionalProperties: { type: 'string' } } } },
      outputSchema: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'object', properties: { 'alert-id': { type: 'integer' } } }] } },
      run: ({ region }: { region?: string | null }) => (region === 'north' ? ['storm', { 'alert-id': 7 }] : []),
    },
  },
})

const RUNTIME_IN_PYTHON = `class Image:
    """An image a tool returned; \`inspect(image)\` shows it to you."""
    path: str
    width: int
    height: int
    media_type: str

def inspect(value: Any) -> None:
    """Shows an Image; prints a readable rendering of any other value."""`

const WEATHER_IN_PYTHON = `class weather:
    """Forecasts from the met office.
    Results arrive as JSON: dict, list, str, int, float, bool or None.
    """

    class Day(TypedDict):
        date: str  # format date
        highC: float  # Highest temperature, °C

    class Forecast(TypedDict):
        city: str
        days: list[Day]

    Alert = TypedDict("Alert", {
        "alert-id": NotRequired[int],
    })

    async def forecast(*, city: str, days: int = 3, units: Literal["metric", "imperial"] = ...) -> Forecast:
        """The forecast for a city, one entry per day.

        Args:
            city: City name
            days: minimum 1, maximum 14
        """

    async def alerts(*, region: str | None = ..., tags: dict[str, str] = ...) -> list[str | Alert]:
        """Active alerts."""

class WeatherError(Exception):
    """Raised by a failed \`weather\` call; \`error.tool\` names the tool."""
    tool: str`

/** The Python the description declares, between its fences. */
function pythonBlock(description: string): string {
  const match = /```python\n([\s\S]*?)\n```/.exec(description)
  if (!match) throw new Error(`no Python block in:\n${description}`)
  return match[1]!
}

describe('the ready tool declares its tools in Python to a Python model', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  beforeAll(async () => {
    env = await startRuntime({ language: 'python', isolation: 'thread', poolSize: 1 })
  }, 180_000)
  afterAll(() => env?.dispose())

  it('writes each group as a namespace class of async functions with keyword-only parameters, TypedDicts and its exception', () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [weather] })
    expect(pythonBlock(tool.description)).toBe(`from typing import Any, Literal, NotRequired, TypedDict\n\n${RUNTIME_IN_PYTHON}\n\n${WEATHER_IN_PYTHON}`)
    expect(tool.description).toContain('call its functions on it (`await weather.forecast(...)`), never instantiate it')
    expect(tool.description).not.toContain('```ts')
  })

  it('says which Python the installed Pyodide runs, and that it has the standard library only', () => {
    const manifest = createRequire(import.meta.url).resolve('pyodide/package.json')
    const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }
    const { info } = JSON.parse(readFileSync(path.join(path.dirname(manifest), 'pyodide-lock.json'), 'utf8')) as { info: { python: string } }
    const { description } = createRunCodeTool({ runtime: env.runtime, groups: [weather] })
    expect(description).toContain(`The interpreter is CPython ${info.python} (Pyodide ${version}) with the standard library only`)
    expect(description).toContain('reach no network')
    expect(description).toContain('Write the body of an async Python function')
    expect(description).not.toMatch(/JavaScript|Promise\.all|console\.log/)
  })

  it('runs a program written against the declarations: keywords, a default, a Literal, gather and the exception', SLOW, async () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [weather], timeoutMs: 60_000 })
    const answer = await tool.run({
      program: `import asyncio
oslo, alerts = await asyncio.gather(weather.forecast(city="Oslo", units="metric"), weather.alerts(region="north"))
try:
    await weather.forecast(city="Oslo", days=40)
except WeatherError as error:
    print("refused", error.tool)
return {"highs": [day["highC"] for day in oslo["days"]], "alerts": alerts}`,
    })
    expect(answer.result.error).toBeUndefined()
    expect(answer.text).toContain('refused forecast')
    expect(answer.result.value).toEqual({ highs: [4, 5, 6], alerts: ['storm', { 'alert-id': 7 }] })
  })

  it('with discovery on, declares catalog in Python and describe answers with a tool’s Python declaration', SLOW, async () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [weather], discovery: 'always', timeoutMs: 60_000 })
    const block = pythonBlock(tool.description)
    expect(block).toContain('class catalog:')
    expect(block).toContain('    async def search(query: str, /, *, limit: int = 10) -> list[Found]:')
    expect(block).toContain('class weather:\n    """Forecasts from the met office. 2 tools: find them with catalog.search."""')
    const answer = await tool.run({
      program: `found = await catalog.search("forecast city", limit=1)
print(await catalog.describe(found[0]["name"]))
return found[0]["name"]`,
    })
    expect(answer.result.value).toBe('weather.forecast')
    expect(answer.text).toContain('    async def forecast(*, city: str, days: int = 3, units: Literal["metric", "imperial"] = ...) -> Forecast:')
    expect(answer.text).not.toContain('Promise<')
  })

  it('keeps a group assembled by hand in TypeScript, with how a Python program calls it', () => {
    const namespace: PtcBindingNamespace = { global: 'notes', functions: { add: async () => null } }
    const byHand: ToolGroup = { namespace, declarations: 'declare const notes: { add(args: { text: string }): Promise<null> }', description: '', tools: [] }
    const { description } = createRunCodeTool({ runtime: env.runtime, groups: [weather, byHand] })
    expect(pythonBlock(description)).toContain('class weather:')
    expect(description).toContain('These tools are declared in TypeScript: call each as `await <namespace>.<tool>(name=value, ...)`')
    expect(description).toContain('```ts\ndeclare const notes: { add(args: { text: string }): Promise<null> }\n```')
  })
})
