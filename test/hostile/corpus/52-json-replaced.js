// attack: replaces JSON.stringify and JSON.parse, and plants toJSON on Object.prototype
// expect: ok
// value: {"list": [1, 2, 3], "text": "plain"}
JSON.stringify = () => '"forged"'
JSON.parse = () => ({ forged: true })
Object.prototype.toJSON = () => 'rewritten'
const copy = await tools.echo({ list: [1, 2, 3], text: 'plain' })
delete Object.prototype.toJSON
/* completion */ copy
