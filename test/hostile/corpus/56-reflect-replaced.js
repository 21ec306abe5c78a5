// attack: replaces every Reflect method and Object.defineProperty before printing and calling
// expect: ok
// value: "reflected"
// output: ^still printing\n$
for (const key of Reflect.ownKeys(Reflect)) if (typeof Reflect[key] === 'function') Reflect[key] = () => { throw new Error(`Reflect.${String(key)} refused`) }
Object.defineProperty = () => { throw new Error('defineProperty refused') }
console.log('still printing')
/* completion */ await tools.echo('reflected')
