import { ESLint } from 'eslint'
import { describe, expect, it } from 'vitest'
// @ts-expect-error: the lint configuration is plain JavaScript without declarations
import { LAYERS } from '../../eslint.config.mjs'

// The repository's own configuration, asked about an import written into a file of each layer.
const repository = new ESLint()

async function refusal(file: string, specifier: string): Promise<string | undefined> {
  const [result] = await repository.lintText(`import { x } from '${specifier}'\nexport { x }\n`, { filePath: file })
  return result!.messages.find((message) => message.ruleId === 'no-restricted-imports')?.message
}

describe('the layer rule of the lint', () => {
  it('refuses an import of the host from the helper and from what the helper shares with the host', async () => {
    expect(await refusal('src/helper/probe.ts', '../host/provider.js')).toContain('src/helper/ may import only')
    expect(await refusal('src/system/probe.ts', '../host/environments/pool.js')).toContain('src/system/ may import only protocol')
    expect(await refusal('src/protocol/probe.ts', '../host/run/session.js')).toContain('src/protocol/ may import only')
  })

  it('keeps the seam free of every other layer, and the tool groups free of the host', async () => {
    expect(await refusal('src/seam/probe.ts', '../json/index.js')).toContain('src/seam/ may import nothing of ours')
    expect(await refusal('src/tools/probe.ts', '../host/provider.js')).toContain('src/tools/ may import only')
  })

  it('accepts the imports each layer is allowed, and any import within a layer', async () => {
    expect(await refusal('src/helper/probe.ts', '../system/turns.js')).toBeUndefined()
    expect(await refusal('src/helper/probe.ts', './helper-worker.js')).toBeUndefined()
    expect(await refusal('src/tools/probe.ts', '../seam/types.js')).toBeUndefined()
    expect(await refusal('src/host/run/probe.ts', '../../helper/helper-worker.js')).toBeUndefined()
  })

  it('covers every folder of src/ that is not the host, Python or the CLI', async () => {
    const { readdirSync } = await import('node:fs')
    const folders = readdirSync('src', { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name)
    expect(folders.filter((folder) => !(folder in LAYERS)).sort()).toEqual(['cli', 'host', 'python'])
  })
})
