# Compile options every Duet target shares: warnings as errors, and the sanitizers when asked for.
add_library(duet_options INTERFACE)
# Designated initializers with defaulted members are the intended way to fill option and definition structs.
target_compile_options(duet_options INTERFACE -Wall -Wextra -Werror -Wpedantic -Wno-missing-field-initializers
                                             $<$<CXX_COMPILER_ID:GNU>:-Wshadow=local>
                                             # GCC 12 misreports Asio coroutine frames (allocated and freed by
                                             # the frame's own operator new/delete) under the sanitizers.
                                             $<$<CXX_COMPILER_ID:GNU>:-Wno-mismatched-new-delete>
                                             # GCC 12 at -O3 (Release) reports impossible sizes in inlined
                                             # std::string concatenation (stringop-overflow, array-bounds,
                                             # restrict: false positives, GCC bug 105329), which -Werror
                                             # would turn into a failed `make bench` build.
                                             $<$<AND:$<CXX_COMPILER_ID:GNU>,$<CONFIG:Release>>:-Wno-stringop-overflow;-Wno-array-bounds;-Wno-restrict>)

if(DUET_SANITIZE)
    set(duet_sanitizers -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
    add_compile_options(${duet_sanitizers})
    add_link_options(${duet_sanitizers})
endif()

if(DUET_FUZZ)
    add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                        -fno-omit-frame-pointer)
    add_link_options(-fsanitize=address,undefined)
endif()
