# Embeds a data file into C at build time:
#   cmake -DIN=<file> -DOUT=<file.c> -DSYMBOL=<name> -P embed.cmake
# writes `const char <name>[]` holding the file's bytes and a terminating NUL.
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}.tmp" "/* Generated from ${IN} by cmake/embed.cmake: do not edit. */\n"
        "extern const char ${SYMBOL}[];\nconst char ${SYMBOL}[] = {\n${bytes}0x00};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
