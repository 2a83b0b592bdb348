# Embeds a text file into C at build time:
#   cmake -DIN=<file> -DOUT=<file.c> -DNAME=<identifier> -P embed-text.cmake
# writes `const char NAME[]` (the file's bytes and a NUL) and `const size_t NAME_len` (its
# length without the NUL), rewriting OUT only when they change.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" bytes "${bytes}")
set(text "/* Generated from ${IN} by cmake/embed-text.cmake: do not edit. */\n#include <stddef.h>\n\nconst char ${NAME}[] = {\n${bytes}0x00};\nconst size_t ${NAME}_len = ${len};\n")
if(EXISTS "${OUT}")
        file(READ "${OUT}" old)
        if(old STREQUAL text)
                return()
        endif()
endif()
file(WRITE "${OUT}" "${text}")
