# Embeds a twin kind's surface.json into C at build time, in three parts:
#   cmake -DIN=<surface.json> -DOUT=<file.c> -DKIND=<kind> -P embed-surface.cmake
# writes `const TwinSurfaceText twin_surface_<kind>` (pods/twin/twin.h) holding
#   full:    the file's bytes (tools/list, the OpenAPI document, twin_kind_check);
#   min:     the same document without each tool's "description" and "inputSchema": what
#            every process parses at start (names, flags, routes), a fraction of the text;
#   schemas: each tool's inputSchema as its own JSON text, in the tools' order, parsed one
#            at a time when asked for.
# All of it is read-only data, shared by every pod that maps the binary.
cmake_policy(SET CMP0007 NEW)

# hex_bytes(<var> <text>): the text's bytes as a C initializer list ending in NUL.
function(hex_bytes var text)
        string(HEX "${text}" hex)
        string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
        string(REGEX REPLACE "((0x..,){16})" "\\1\n" bytes "${bytes}")
        set(${var} "${bytes}0x00" PARENT_SCOPE)
endfunction()

file(READ "${IN}" full)
string(JSON n ERROR_VARIABLE err LENGTH "${full}" tools)
if(err)
        message(FATAL_ERROR "${IN}: ${err}")
endif()
set(min "${full}")
set(decls "")
set(list "")
math(EXPR last "${n} - 1")
if(n GREATER 0)
        foreach(i RANGE ${last})
                string(JSON schema ERROR_VARIABLE err GET "${full}" tools ${i} inputSchema)
                if(err)
                        set(schema "null") # twin_kind_check names the broken tool
                endif()
                hex_bytes(bytes "${schema}")
                string(APPEND decls "static const char schema_${i}[] = {\n${bytes}};\n")
                string(APPEND list "schema_${i}, ")
                string(JSON min ERROR_VARIABLE err REMOVE "${min}" tools ${i} inputSchema)
                string(JSON min ERROR_VARIABLE err REMOVE "${min}" tools ${i} description)
        endforeach()
endif()
hex_bytes(full_bytes "${full}")
hex_bytes(min_bytes "${min}")
file(WRITE "${OUT}.tmp" "/* Generated from ${IN} by cmake/embed-surface.cmake: do not edit. */\n"
        "#include \"pods/twin/twin.h\"\n\n"
        "static const char full[] = {\n${full_bytes}};\n"
        "static const char min[] = {\n${min_bytes}};\n"
        "${decls}"
        "static const char *const schemas[] = {${list}NULL};\n"
        "const TwinSurfaceText twin_surface_${KIND} = {full, min, schemas, ${n}};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
