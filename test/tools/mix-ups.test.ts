import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRunCodeTool, defineToolGroup } from 'ptc-runtime'
import { startRuntime } from '../helpers/runtime.js'

const weather = defineToolGroup({ global: 'weather', tools: { now: { inputSchema: { type: 'object' }, run: () => 'rain' } } })

describe('passing the wrong object says which one to pass', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  beforeAll(async () => {
    env = await startRuntime({ isolation: 'thread' })
  })
  afterAll(() => env.dispose())

  it('a tool group passed as a binding names the group and asks for its namespace', async () => {
    await expect(env.run('return 1', { bindings: [weather as never] })).rejects.toThrow(
      'bindings[0] is the tool group "weather" (what defineToolGroup, mcpToolGroup and fromAiSdkTools return), not a binding namespace: pass its .namespace (bindings: [group.namespace])',
    )
  })

  it('a namespace passed as a tool group asks for the group itself', () => {
    expect(() => createRunCodeTool({ runtime: env.runtime, groups: [weather, weather.namespace as never] })).toThrow(
      'createRunCodeTool: groups[1] is a binding namespace ("weather"), not a tool group: pass the group itself (what defineToolGroup, mcpToolGroup and fromAiSdkTools return), not its .namespace',
    )
    expect(() => createRunCodeTool({ runtime: env.runtime, groups: weather as never })).toThrow('createRunCodeTool: groups must be an array of tool groups')
    expect(() => createRunCodeTool({ runtime: env.runtime, groups: [{} as never] })).toThrow('createRunCodeTool: groups[0] is not a tool group (it has no namespace)')
  })

  it('the ready tool tells the model that namespaces are read-only and how to test for a tool', () => {
    const { description } = createRunCodeTool({ runtime: env.runtime, groups: [weather] })
    expect(description).toContain('Tool namespaces are read-only and have no prototype: keep your own helpers in local functions or variables (not `tools.step = ...`), and test for a tool with `Object.hasOwn(tools, "name")` (not `tools.hasOwnProperty`).')
  })
})
