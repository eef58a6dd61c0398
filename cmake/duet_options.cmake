# Compile options every Duet target shares: warnings as errors, and the sanitizers when asked for.
add_library(duet_options INTERFACE)
target_compile_options(duet_options INTERFACE -Wall -Wextra -Werror -Wpedantic
                                             $<$<CXX_COMPILER_ID:GNU>:-Wshadow=local>)

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
