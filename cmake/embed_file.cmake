# Writes IN as a NUL-terminated C byte array named SYMBOL into OUT.
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR size "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUT} "/* generated from ${IN} */\n"
  "__attribute__((visibility(\"hidden\"))) const char ${SYMBOL}[] = {${bytes} 0x00};\n"
  "__attribute__((visibility(\"hidden\"))) const unsigned long ${SYMBOL}_size = ${size};\n")
