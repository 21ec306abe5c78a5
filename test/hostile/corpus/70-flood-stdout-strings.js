// attack: floods process.stdout.write with strings, never yielding
// expect: output-limit
for (;;) process.stdout.write('stdout flood\n')
