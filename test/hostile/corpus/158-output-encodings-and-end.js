// attack: writes through every write and end form, with encodings, typed arrays and a character split across chunks, to corrupt the output or reach the host's own stdout
// expect: ok
// output: ^hello AB€ ended\n$
// value: "written"
process.stdout.write('68656c6c6f', 'hex')
process.stdout.write(' ')
process.stdout.write(new Uint16Array([16961]))
const euro = Buffer.from('€')
process.stderr.write(euro.subarray(0, 1))
process.stderr.write(euro.subarray(1))
process.stdout.end(' ended\n')
/* completion */ 'written'
