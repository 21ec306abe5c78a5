// attack: floods output through every console method in turn
// expect: output-limit
const methods = ['log', 'info', 'warn', 'error', 'debug', 'trace', 'dir', 'dirxml', 'table', 'group', 'groupCollapsed', 'groupEnd', 'count', 'countReset', 'time', 'timeLog', 'timeEnd', 'assert']
for (let i = 0; ; i++) {
  const method = methods[i % methods.length]
  if (method === 'assert') console.assert(false, 'assertion', i)
  else if (method === 'table') console.table([{ i }])
  else console[method]('flood', i)
}
