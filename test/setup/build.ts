import { execFileSync } from 'node:child_process'

// Behaviour tests run the built package (`dist/`), exactly what ships. Build it once per test
// run; `PTC_SKIP_BUILD=1` skips this when the caller has just built (CI does).
export default function setup() {
  if (process.env.PTC_SKIP_BUILD === '1') return
  execFileSync('npx', ['tsup', '--silent'], { stdio: 'inherit' })
}
