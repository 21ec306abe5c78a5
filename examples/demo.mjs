// `npm run demo`: a host with two realistic tools, running programs of the kind a model writes.
// Everything is local: an in-memory product catalogue, an order API, and a chart renderer that
// produces a real PNG file at run time.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { deflateSync } from 'node:zlib'
import { Context } from 'cordis'
import { PtcImage } from 'ptc-runtime'
import { WorkerPtcRuntime } from 'ptc-runtime/cordis'

const products = [
  { sku: 'TNT-01', name: 'Trail tent (2p)', category: 'camping', price: 189, stock: 4 },
  { sku: 'BAG-07', name: 'Down sleeping bag', category: 'camping', price: 249, stock: 0 },
  { sku: 'STV-03', name: 'Gas stove', category: 'camping', price: 59, stock: 12 },
  { sku: 'BT-220', name: 'Hiking boots', category: 'footwear', price: 139, stock: 7 },
  { sku: 'SK-011', name: 'Wool socks (3 pack)', category: 'footwear', price: 24, stock: 40 },
]
const orders = []

/** A width x height PNG with one bar per value: small, valid, and made here. */
function barChartPng(values, width = 120, height = 60) {
  const max = Math.max(...values, 1)
  const raw = Buffer.alloc((width * 3 + 1) * height)
  for (let y = 0; y < height; y++) {
    raw[y * (width * 3 + 1)] = 0
    for (let x = 0; x < width; x++) {
      const bar = Math.floor((x / width) * values.length)
      const filled = height - y <= (values[bar] / max) * height
      const offset = y * (width * 3 + 1) + 1 + x * 3
      raw.set(filled ? [40, 110, 200] : [250, 250, 250], offset)
    }
  }
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    return c >>> 0
  })
  const crc = (buffer) => {
    let c = 0xffffffff
    for (const byte of buffer) c = crcTable[(c ^ byte) & 0xff] ^ (c >>> 8)
    return (c ^ 0xffffffff) >>> 0
  }
  const chunk = (type, data) => {
    const body = Buffer.concat([Buffer.from(type), data])
    const out = Buffer.alloc(body.length + 8)
    out.writeUInt32BE(data.length, 0)
    body.copy(out, 4)
    out.writeUInt32BE(crc(body), body.length + 4)
    return out
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.set([8, 2, 0, 0, 0], 8)
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

const chartDirectory = mkdtempSync(path.join(tmpdir(), 'ptc-demo-'))
let charts = 0

const bindings = [
  {
    global: 'catalog',
    functions: {
      search: async ({ category, maxPrice = Infinity }) =>
        products.filter((p) => (!category || p.category === category) && p.price <= maxPrice),
      stock: async ({ sku }) => {
        const product = products.find((p) => p.sku === sku)
        if (!product) throw new Error(`unknown sku ${sku}`)
        return { sku, stock: product.stock }
      },
    },
    errorClass: { name: 'CatalogError', memberNameProperty: 'tool' },
  },
  {
    global: 'orders',
    functions: {
      place: async ({ sku, quantity }) => {
        const product = products.find((p) => p.sku === sku)
        if (!product || product.stock < quantity) throw new Error(`cannot order ${quantity} x ${sku}: not enough stock`)
        product.stock -= quantity
        const order = { id: `ORD-${1000 + orders.length}`, sku, quantity, total: product.price * quantity }
        orders.push(order)
        return order
      },
    },
  },
  {
    global: 'charts',
    functions: {
      bars: async ({ values }) => {
        const png = barChartPng(values)
        const file = path.join(chartDirectory, `chart-${++charts}.png`)
        writeFileSync(file, png)
        return new PtcImage(file, {
          attachmentId: `chart-${charts}`,
          mediaType: 'image/png',
          bytes: png.length,
          width: 120,
          height: 60,
          name: 'stock chart',
        })
      },
    },
  },
]

const programs = [
  [
    'Find in-stock camping gear under $200, concurrently check stock, order the cheapest',
    `const gear = await catalog.search({ category: 'camping', maxPrice: 200 })
const stock = await Promise.all(gear.map((p) => catalog.stock({ sku: p.sku })))
const available = gear.filter((p, i) => stock[i].stock > 0).sort((a, b) => a.price - b.price)
console.log(\`\${available.length} of \${gear.length} items are in stock\`)
for (const p of available) console.log(\`- \${p.name}: $\${p.price}\`)
const order = await orders.place({ sku: available[0].sku, quantity: 2 })
return { ordered: order.id, total: order.total }`,
  ],
  [
    'Draw a stock chart and show it',
    `const all = await catalog.search({})
const chart = await charts.bars({ values: all.map((p) => p.stock) })
console.log('chart', chart.width, 'x', chart.height, chart.mediaType)
inspect(chart)
return all.map((p) => p.sku)`,
  ],
  [
    'A typed tool error the program catches, then an uncaught one',
    `try {
  await catalog.stock({ sku: 'NOPE' })
} catch (error) {
  console.log(error instanceof CatalogError, error.tool, error.message)
}
await orders.place({ sku: 'BAG-07', quantity: 1 })`,
  ],
  ['A program that never ends, stopped by its time budget', `while (true) {}`],
  [
    'The same tools from Python: concurrent calls with asyncio.gather',
    `import asyncio
gear = await catalog.search(category="camping")
stock = await asyncio.gather(*(catalog.stock(sku=p["sku"]) for p in gear))
for p, s in zip(gear, stock):
    print(f"- {p['name']}: {s['stock']} in stock")
return sum(s["stock"] for s in stock)`,
    // A request may ask for Python on a JavaScript runtime (with the optional peer pyodide
    // installed); its first environment loads the interpreter, so it gets a longer budget.
    { language: 'python', timeoutMs: 60_000 },
  ],
]

// No `sandbox` setting: the default confinement. Programs see the system read-only, none of
// this user's files (no home, not this directory), have no network, and write only to a private
// scratch directory and /tmp of their own; the tools above run here, with this script's access.
const root = new Context()
await root.plugin(WorkerPtcRuntime, { timeoutMs: 2000 })
const runtime = root.ptcRuntime

console.log('--- executionInstructions (what the model is told) ---')
console.log(runtime.executionInstructions)
for (const [title, program, options = {}] of programs) {
  console.log(`\n=== ${title} ===`)
  console.log(program.replace(/^/gm, '  | '))
  let spec
  try {
    spec = runtime.resolve({ program, bindings, ...options })
  } catch (error) {
    // Without pyodide, a request for Python is refused here, naming the package to install.
    console.log(`  (skipped: ${error.message})`)
    continue
  }
  const started = performance.now()
  const result = await runtime.run(spec)
  const ms = (performance.now() - started).toFixed(1)
  for (const entry of result.output) {
    if (entry.type === 'text') process.stdout.write(`  > ${entry.text}`)
    else console.log(`  > [image ${entry.attachment.attachmentId}: ${entry.attachment.width}x${entry.attachment.height} ${entry.attachment.mediaType}]`)
  }
  if ('value' in result) console.log('  value:', JSON.stringify(result.value))
  if (result.error) console.log(`  error (${result.error.kind}):`, result.error.message)
  console.log(`  (${ms} ms)`)
}
await root.fiber.dispose()
rmSync(chartDirectory, { recursive: true, force: true })
