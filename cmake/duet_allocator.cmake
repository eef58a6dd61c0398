# The heap of the executables Duet ships. A forwarded call through `duet gateway` makes about a hundred small
# allocations (coroutine frames, JSON values, buffers) that are freed in bursts, past the few blocks per size
# glibc's per-thread cache keeps; mimalloc's per-page free lists take about 13 % of the instructions off a
# forwarded call (bench/findings.md, session 12). The libraries stay allocator-neutral: an application built
# on them keeps the heap it chose.
option(DUET_MIMALLOC "Link the duet executable with mimalloc (Debian's libmimalloc-dev)" ON)

# The sanitizers (and the fuzz build's) bring an allocator of their own, which must stay the one that serves
# malloc.
if(DUET_MIMALLOC AND NOT DUET_SANITIZE AND NOT DUET_FUZZ)
    find_package(mimalloc 2.0 CONFIG QUIET)
    if(NOT mimalloc_FOUND)
        message(FATAL_ERROR "mimalloc not found: run scripts/bootstrap (installs libmimalloc-dev), "
                            "or configure with -DDUET_MIMALLOC=OFF to keep glibc's malloc")
    endif()
    set(duet_uses_mimalloc ON)
else()
    set(duet_uses_mimalloc OFF)
endif()

# Makes mimalloc serve every malloc and operator new of `target`'s process. Linked as a shared library ahead of
# libc, its malloc is the one the dynamic linker binds for the executable and every library it loads.
function(duet_use_mimalloc target)
    if(duet_uses_mimalloc)
        target_link_libraries(${target} PRIVATE mimalloc)
        target_compile_definitions(${target} PRIVATE DUET_WITH_MIMALLOC)
    endif()
endfunction()
