// attack: plants get, set and value on Object.prototype, turning any plain descriptor literal into an invalid accessor descriptor
// expect: ok
// value: "echoed"
for (const key of ['get', 'set']) Object.prototype[key] = function () { throw new Error(`planted ${key}`) }
console.log('printed through the polluted realm')
/* completion */ await tools.echo('echoed')
