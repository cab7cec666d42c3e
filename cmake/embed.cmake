# Writes a C source holding a file's bytes as a NUL-terminated char array:
#   cmake -DIN=file -DOUT=file.c -DNAME=symbol -P embed.cmake
# (the built-in source descriptions ship inside the binary this way).
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
file(WRITE ${OUT} "/* Generated from ${IN} by cmake/embed.cmake: do not edit. */\n"
                  "const char ${NAME}[] = {${hex} 0x00};\n")
