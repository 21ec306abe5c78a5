// attack: tools reject with, or resolve to, values whose getters, methods or proxy traps throw (a null prototype, a throwing message getter, a proxy around an Error, a revoked proxy, a throwing toString, a Symbol from toPrimitive, a huge message): the host describes each without running its code
// expect: ok
// value: ["null-prototype: Error: the tool rejected with an object that is not an Error","message-getter: Error: the tool rejected with an Error whose message cannot be read","name-getter: Error: named","proxy-error: Error: the tool rejected with a proxy","revoked-proxy: Error: the tool rejected with a proxy","to-string-throws: Error: the tool rejected with an object that is not an Error","to-primitive-symbol: Error: the tool rejected with an object that is not an Error","symbol: Error: the tool rejected with Symbol(thrown)","message-not-string: Error: the tool rejected with an Error whose message cannot be read","prototype-proxy: Error: the tool rejected with an object that is not an Error","huge-message: Error: 16385+","quiet-proxy: Error: the tool rejected with a proxy","resolved revoked-proxy: Error: Cannot perform 'get' on a proxy that has been revoked","resolved throwing-getter: Error: tools.resolveHostile resolved a value that is not lossless JSON (getter threw at $.value: a hostile value ran code)","resolved then-getter: Error: a hostile value ran code","resolved proxy-error: Error: a hostile value ran code","resolved quiet-proxy: Error: tools.resolveHostile resolved a value that is not lossless JSON (proxy at $)"]
const rejections = ['null-prototype', 'message-getter', 'name-getter', 'proxy-error', 'revoked-proxy', 'to-string-throws', 'to-primitive-symbol', 'symbol', 'message-not-string', 'prototype-proxy', 'huge-message', 'quiet-proxy']
const seen = []
const describe = (error) => (typeof error.message === 'string' && error.message.length > 1000 ? `${error.constructor.name}: ${error.message.length}+` : `${error.constructor.name}: ${error.message}`)
for (const kind of rejections) {
  try {
    await tools.reject(kind)
    seen.push(`${kind}: resolved`)
  } catch (error) {
    seen.push(`${kind}: ${describe(error)}`)
  }
}
for (const kind of ['revoked-proxy', 'throwing-getter', 'then-getter', 'proxy-error', 'quiet-proxy']) {
  try {
    await tools.resolveHostile(kind)
    seen.push(`resolved ${kind}: resolved`)
  } catch (error) {
    seen.push(`resolved ${kind}: ${describe(error)}`)
  }
}
/* completion */ seen
