// attack: plants getters on globalThis for names the runtime installs (console, inspect, Image, tools)
// expect: ok
// value: "installed"
for (const name of ['console', 'inspect', 'Image', 'tools', 'require', 'process']) {
  try { Object.defineProperty(globalThis, name, { get() { throw new Error(`${name} getter`) }, configurable: true }) } catch {}
}
/* completion */ 'installed'
