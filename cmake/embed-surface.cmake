# Embeds a twin kind's surface.json into C at build time:
#   cmake -DIN=<surface.json> -DOUT=<file.c> -DKIND=<kind> -P embed-surface.cmake
# writes `const TwinSurfaceText twin_surface_<kind>` (pods/twin/twin.h) holding
#   full:    the file's bytes (tools/list, the OpenAPI document, twin_kind_check);
#   schemas: each tool's inputSchema as its own JSON text, in the tools' order, parsed one
#            at a time when asked for;
#   tools, routes, vendor_routes: what every process keeps (names, flags, routes, each
#            route once per prefix, its fixed arguments as JSON text) as C tables, so that
#            a pod starts without parsing any of it.
# All of it is read-only data, shared by every pod that maps the binary. A surface.json
# whose kept part is not of the documented shape fails the build, naming the entry.
cmake_policy(SET CMP0007 NEW)

# hex_bytes(<var> <text>): the text's bytes as a C initializer list ending in NUL.
function(hex_bytes var text)
        string(HEX "${text}" hex)
        string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
        string(REGEX REPLACE "((0x..,){16})" "\\1\n" bytes "${bytes}")
        set(${var} "${bytes}0x00" PARENT_SCOPE)
endfunction()

# json_get(<var> <what> <type> <path...>): the element at path, which must be of JSON type
# <type> (STRING, BOOLEAN, OBJECT, ARRAY; "STRING?" and the like: or absent), as a C
# expression: a string literal, true/false, or NULL when absent. Names and patterns must be
# printable ASCII without '"' or '\'.
function(json_get var what type)
        string(JSON t ERROR_VARIABLE err TYPE "${full}" ${ARGN})
        string(REGEX REPLACE "\\?$" "" want "${type}")
        if(err AND NOT want STREQUAL type)
                set(${var} "NULL" PARENT_SCOPE)
                return()
        endif()
        if(err OR NOT t STREQUAL want)
                message(FATAL_ERROR "${IN}: ${what} must be of type ${want}")
        endif()
        string(JSON v GET "${full}" ${ARGN})
        if(want STREQUAL "BOOLEAN")
                if(v)
                        set(v "true")
                else()
                        set(v "false")
                endif()
        elseif(want STREQUAL "STRING")
                if(NOT v MATCHES "^[ !#-[^-~]*$")
                        message(FATAL_ERROR "${IN}: ${what} must be printable ASCII without "
                                "'\"' or '\\': \"${v}\"")
                endif()
                set(v "\"${v}\"")
        endif()
        set(${var} "${v}" PARENT_SCOPE)
endfunction()

file(READ "${IN}" full)
string(JSON n ERROR_VARIABLE err LENGTH "${full}" tools)
if(err)
        message(FATAL_ERROR "${IN}: ${err}")
endif()
set(decls "")
set(schema_list "")
set(tool_rows "")
if(n GREATER 0)
        math(EXPR last "${n} - 1")
        foreach(i RANGE ${last})
                string(JSON schema ERROR_VARIABLE err GET "${full}" tools ${i} inputSchema)
                if(err)
                        set(schema "null") # twin_kind_check names the broken tool
                endif()
                hex_bytes(bytes "${schema}")
                string(APPEND decls "static const char schema_${i}[] = {\n${bytes}};\n")
                string(APPEND schema_list "schema_${i}, ")
                json_get(name "tools[${i}].name" STRING tools ${i} name)
                json_get(ro "tools[${i}].readOnly" BOOLEAN tools ${i} readOnly)
                json_get(mcp "tools[${i}].mcp" BOOLEAN? tools ${i} mcp)
                json_get(any "tools[${i}].anyBody" BOOLEAN? tools ${i} anyBody)
                json_get(array_body "tools[${i}].arrayBody" STRING? tools ${i} arrayBody)
                if(mcp STREQUAL "NULL")
                        set(mcp "true")
                endif()
                if(any STREQUAL "NULL")
                        set(any "false")
                endif()
                string(JSON out_type ERROR_VARIABLE err TYPE "${full}" tools ${i} outputSchema)
                if(NOT err AND out_type STREQUAL "OBJECT")
                        set(out "true")
                else()
                        set(out "false")
                endif()
                string(APPEND tool_rows
                        "        {${name}, ${ro}, ${mcp}, ${any}, ${array_body}, ${out}},\n")
        endforeach()
endif()

# routes, once per prefix, in order of prefix then table (TwinSurface)
string(JSON n_prefixes ERROR_VARIABLE err LENGTH "${full}" prefixes)
set(prefixes "")
if(err)
        set(prefixes "\"\"")
elseif(n_prefixes EQUAL 0)
        message(FATAL_ERROR "${IN}: prefixes must not be empty")
else()
        math(EXPR last "${n_prefixes} - 1")
        foreach(p RANGE ${last})
                json_get(prefix "prefixes[${p}]" STRING prefixes ${p})
                if(NOT prefix MATCHES "^\"(/.*)?\"$")
                        message(FATAL_ERROR "${IN}: prefixes[${p}] must be \"\" or start with '/'")
                endif()
                list(APPEND prefixes "${prefix}")
        endforeach()
endif()
string(JSON n_routes ERROR_VARIABLE err LENGTH "${full}" routes)
if(err)
        message(FATAL_ERROR "${IN}: routes must be an array")
endif()
# each route read once (its fixed args declared once), then written once per prefix
if(n_routes GREATER 0)
        math(EXPR last_route "${n_routes} - 1")
        foreach(i RANGE ${last_route})
                string(JSON len ERROR_VARIABLE err LENGTH "${full}" routes ${i})
                if(err OR len LESS 3 OR len GREATER 4)
                        message(FATAL_ERROR "${IN}: routes[${i}] must be [METHOD, \"/pattern\", "
                                "tool, {fixed args}?]")
                endif()
                json_get(route_${i}_method "routes[${i}][0]" STRING routes ${i} 0)
                json_get(route_${i}_pattern "routes[${i}][1]" STRING routes ${i} 1)
                json_get(tool "routes[${i}][2]" STRING routes ${i} 2)
                set(args "NULL")
                if(len EQUAL 4)
                        json_get(text "routes[${i}][3]" OBJECT routes ${i} 3)
                        hex_bytes(bytes "${text}")
                        string(APPEND decls "static const char args_${i}[] = {\n${bytes}};\n")
                        set(args "args_${i}")
                endif()
                set(route_${i}_rest "${tool}, ${args}")
        endforeach()
endif()
set(route_rows "")
set(n_kept_routes 0)
foreach(prefix IN LISTS prefixes)
        if(n_routes EQUAL 0)
                break()
        endif()
        foreach(i RANGE ${last_route})
                # "" + "/x" → "/x"; "/api" + "/x" → "/api/x": C's literal concatenation
                string(APPEND route_rows "        {${route_${i}_method}, ${prefix} "
                        "${route_${i}_pattern}, ${route_${i}_rest}},\n")
                math(EXPR n_kept_routes "${n_kept_routes} + 1")
        endforeach()
endforeach()

string(JSON n_vendor ERROR_VARIABLE err LENGTH "${full}" vendor_routes)
set(vendor_rows "")
if(err)
        set(n_vendor 0)
elseif(n_vendor GREATER 0)
        math(EXPR last "${n_vendor} - 1")
        foreach(i RANGE ${last})
                string(JSON len LENGTH "${full}" vendor_routes ${i})
                if(NOT len EQUAL 2)
                        message(FATAL_ERROR "${IN}: vendor_routes[${i}] must be [METHOD, "
                                "\"/pattern\"]")
                endif()
                json_get(method "vendor_routes[${i}][0]" STRING vendor_routes ${i} 0)
                json_get(pattern "vendor_routes[${i}][1]" STRING vendor_routes ${i} 1)
                string(APPEND vendor_rows "        {${method}, ${pattern}, NULL, NULL},\n")
        endforeach()
endif()

hex_bytes(full_bytes "${full}")
file(WRITE "${OUT}.tmp" "/* Generated from ${IN} by cmake/embed-surface.cmake: do not edit. */\n"
        "#include \"pods/twin/twin.h\"\n\n"
        "static const char full[] = {\n${full_bytes}};\n"
        "${decls}"
        "static const char *const schemas[] = {${schema_list}NULL};\n"
        "static const TwinToolDef tools[] = {\n${tool_rows}        {NULL, false, false, false},\n};\n"
        "static const TwinRouteDef routes[] = {\n${route_rows}        {NULL, NULL, NULL, NULL},\n};\n"
        "static const TwinRouteDef vendor_routes[] = {\n${vendor_rows}        {NULL, NULL, NULL, NULL},\n};\n"
        "const TwinSurfaceText twin_surface_${KIND} = {\n"
        "        .full = full,\n"
        "        .schemas = schemas,\n"
        "        .n_schemas = ${n},\n"
        "        .tools = tools,\n"
        "        .n_tools = ${n},\n"
        "        .routes = routes,\n"
        "        .n_routes = ${n_kept_routes},\n"
        "        .vendor_routes = vendor_routes,\n"
        "        .n_vendor_routes = ${n_vendor},\n"
        "};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
